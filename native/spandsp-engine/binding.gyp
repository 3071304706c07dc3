{
  "targets": [
    {
      "target_name": "spandsp_engine",
      "sources": ["src/spandsp_engine.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-O2"],
      "libraries": ["<!@(pkg-config --libs spandsp)", "-ltiff", "-lm"]
    }
  ]
}
