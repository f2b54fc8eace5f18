// The IIO simulator lands here (issue 5).
