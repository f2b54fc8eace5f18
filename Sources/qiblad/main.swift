print("qiblad: not yet")
