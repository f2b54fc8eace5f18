// IIO sensor drivers land here (issue 5).
