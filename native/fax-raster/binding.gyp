{
  "targets": [
    {
      "target_name": "fax_raster",
      "sources": ["src/fax_raster.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-O3"]
    }
  ]
}
