print("qiblactl: not yet")
