// State files and configuration land here (issue 3).
