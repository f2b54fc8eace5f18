/// qiblad's version, published as the `Version` property and printed by `--version`.
let qibladVersion = "0.1.0"
