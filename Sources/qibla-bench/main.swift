print("qibla-bench: not yet")
