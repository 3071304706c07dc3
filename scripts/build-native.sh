#!/usr/bin/env bash
# Builds Faxline's native parts:
#   native/fax-raster/build/Release/fax_raster.node           the render stage's per-pixel loops in C (src/render/native-raster.ts;
#                                                             no library needed, built first; without it rendering runs them in TypeScript)
#   native/pdfium/build/Release/pdfium_native.node             loads and calls the prebuilt native PDFium (src/render/pdfium/native-pdfium.ts;
#                                                             no library needed to build it; without it PDFs render with the WebAssembly PDFium)
# and against Debian's libspandsp 0.0.6:
#   native/spandsp-engine/build/Release/spandsp_engine.node   the N-API addon (src/line/fax-engine/spandsp-engine.ts)
#   test/peers/spandsp-receiver/build/t38_receiver           the T.38 receiver the interop tests fax to
#   test/peers/spandsp-receiver/build/g711_receiver          the G.711 (RTP) receiver of the audio tests
#   test/peers/t31-modem/build/t31_modem                     a Class 1 fax modem on a pty, its line T.38 or G.711 (efax's modem)
# All build in about two seconds, offline: node-gyp is the copy bundled with npm, and it takes
# Node's headers from the local installation (--nodedir), never from the network.
#
# Needs (Debian 12): apt-get install -y --no-install-recommends libspandsp-dev libtiff-dev pkg-config
#                    build-essential python3 (node-gyp) and nodejs with its headers (/usr/include/node)
set -euo pipefail
cd "$(dirname "$0")/.."

missing() {
  echo "build-native.sh: $1" >&2
  echo "  install: apt-get install -y --no-install-recommends libspandsp-dev libtiff-dev pkg-config" >&2
  exit 1
}
# Node headers: npm's nodedir setting (~/.npmrc) when it has them, else the system's (/usr/include/node).
nodedir="$(npm config get nodedir 2>/dev/null || true)"
if [ -z "$nodedir" ] || [ "$nodedir" = "undefined" ] || [ ! -f "$nodedir/include/node/node_api.h" ]; then
  nodedir=/usr
fi
[ -f "$nodedir/include/node/node_api.h" ] || missing "Node headers not found ($nodedir/include/node/node_api.h)"

node_gyp="$(npm root -g 2>/dev/null)/npm/node_modules/node-gyp/bin/node-gyp.js"
if [ -f "$node_gyp" ]; then
  gyp=(node "$node_gyp")
elif command -v node-gyp >/dev/null; then
  gyp=(node-gyp)
else
  missing "node-gyp not found (it ships with npm: \$(npm root -g)/npm/node_modules/node-gyp)"
fi

echo "building native/fax-raster (nodedir $nodedir)"
(cd native/fax-raster && "${gyp[@]}" rebuild --nodedir="$nodedir" --loglevel=warn)

echo "building native/pdfium (nodedir $nodedir)"
(cd native/pdfium && "${gyp[@]}" rebuild --nodedir="$nodedir" --loglevel=warn)

pkg-config --exists spandsp 2>/dev/null || missing "libspandsp-dev not found (pkg-config spandsp)"
[ -f /usr/include/tiffio.h ] || [ -f /usr/include/x86_64-linux-gnu/tiffio.h ] || missing "libtiff-dev not found (tiffio.h; spandsp.h includes it)"

echo "building native/spandsp-engine (nodedir $nodedir)"
(cd native/spandsp-engine && "${gyp[@]}" rebuild --nodedir="$nodedir" --loglevel=warn)

echo "building test/peers/spandsp-receiver"
mkdir -p test/peers/spandsp-receiver/build
for receiver in t38_receiver g711_receiver; do
  # shellcheck disable=SC2046
  cc -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter $(pkg-config --cflags spandsp) \
    -o "test/peers/spandsp-receiver/build/$receiver" "test/peers/spandsp-receiver/$receiver.c" \
    $(pkg-config --libs spandsp) -ltiff -lm
done

echo "building test/peers/t31-modem"
mkdir -p test/peers/t31-modem/build
# shellcheck disable=SC2046
cc -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter $(pkg-config --cflags spandsp) \
  -o test/peers/t31-modem/build/t31_modem test/peers/t31-modem/t31_modem.c test/peers/t31-modem/line_codecs.c \
  $(pkg-config --libs spandsp) -ltiff -lm
echo "ok"
