// The libdbus-1 wrapper lands here (issue 3).
