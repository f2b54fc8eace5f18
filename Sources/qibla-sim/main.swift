print("qibla-sim: not yet")
