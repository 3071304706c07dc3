{
  "targets": [
    {
      "target_name": "pdfium_native",
      "sources": ["src/pdfium_native.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-O2"],
      "libraries": ["-ldl", "-lpthread"],
      "ldflags": ["-Wl,-z,nodelete"]
    }
  ]
}
