#!/usr/bin/env bash
# Installs everything Faxline needs on a Debian/Ubuntu machine and starts a node on its
# embedded defaults (SQLite under ./data, port 8080, a demo test account).
#
#   bash scripts/install.sh             install, build, create the demo account, start serving
#   bash scripts/install.sh --no-start  install and build only (CI)
#
# Needs Node.js >= 20 with npm. Debian packages are installed with apt-get when missing (as root,
# or through sudo): python3, make and g++ for the native SQLite binding, fonts-dejavu-core for
# the fax font (DejaVu Sans Mono), fonts-wqy-microhei for Chinese, Japanese and Korean text (the
# fallback font of src/render/fonts/fallback-fonts.ts), libtiff-tools for tiffinfo (checks fax images; the tests use it),
# LibreOffice (writer, calc, impress; without GUI) for office documents and HTML, with the
# metric-compatible Liberation and Carlito fonts so Word documents keep their line breaks,
# Ghostscript for PostScript, and poppler-utils (pdftotext, used by the tests).
# libspandsp-dev, libtiff-dev and pkg-config build the fax engine (an N-API addon binding
# SpanDSP, scripts/build-native.sh, which also builds the render stage's C loops, native/fax-raster)
# and the SpanDSP receiver the interop tests fax to; SIPp
# (sip-tester) is the SIP peer of the interop tests, rtpengine (rtpengine-daemon) their
# T.38/G.711 gateway with a UDPTL of its own, efax a fax program with a T.30 of its own that
# sends to Faxline through the tests' T.31 modem, pdftoppm (poppler-utils) draws the received
# faxes' PDFs for the tests, Kamailio (kamailio, which ships its dispatcher module) the SIP load
# balancer in front of two nodes (examples/kamailio/), dnsmasq (dnsmasq-base) their DNS server for
# SRV and NAPTR records, and openssl makes their TLS certificate. A test whose peer is missing
# fails and names the package (test/support/required-peers.ts).
# (Installing rtpengine-daemon enables its system service; the tests start their own instance.
# So does kamailio's, on port 5060, where a node's SIP line listens: it is disabled again here.)
# PostgreSQL's server (the postgresql package) is installed when its programs are absent: the
# tests start throwaway clusters of their own with initdb and pg_ctl (as the postgres user when
# run as root), and several nodes can share one PostgreSQL database (store.url). The package's
# own cluster and service are not used by Faxline.
# OpenSSH's server (openssh-server) is the SFTP server the fax-to-SFTP tests start on their own
# (sshd -D -f with a config, host key and port of their own). The system's ssh service is not
# wanted: when this script installs the package it first creates /etc/ssh/sshd_not_to_be_run, which
# Debian's ssh.service, ssh.socket and init script honour, so that service never starts.
# Chromium (Debian's chromium package) is the real browser the console's tests drive with
# playwright-core; the node itself does not need it (FAXLINE_INSTALL_BROWSER=0 skips it).
# A node without LibreOffice or Ghostscript still runs; it refuses those document types with
# a 400 that names the missing package (set FAXLINE_INSTALL_CONVERTERS=0 to skip them).
set -euo pipefail
cd "$(dirname "$0")/.."

START=1
[ "${1:-}" = "--no-start" ] && START=0

if ! command -v node >/dev/null 2>&1; then
  echo "install: Node.js >= 20 is required (node not found). Install Node.js 20, 22 or 24, then run this again." >&2
  exit 1
fi
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" -lt 20 ]; then
  echo "install: Node.js >= 20 is required; this is $(node --version)." >&2
  exit 1
fi

missing=()
tools=(python3 make g++ tiffinfo pkg-config sipp rtpengine efax pdftoppm openssl dnsmasq kamailio)
[ "${FAXLINE_INSTALL_CONVERTERS:-1}" = "1" ] && tools+=(soffice gs pdftotext)
[ "${FAXLINE_INSTALL_BROWSER:-1}" = "1" ] && tools+=(chromium)
for tool in "${tools[@]}"; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
# The fax font and the SpanDSP and libtiff headers are files, not commands.
pkg-config --exists spandsp 2>/dev/null || missing+=(libspandsp-dev)
[ -f /usr/include/tiffio.h ] || [ -f /usr/include/x86_64-linux-gnu/tiffio.h ] || missing+=(tiffio.h)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] || missing+=(DejaVuSansMono.ttf)
[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || missing+=(wqy-microhei.ttc)
[ -x /usr/sbin/sshd ] || missing+=(sshd)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(initdb)
if [ "${#missing[@]}" -gt 0 ]; then
  pkgs=()
  for tool in "${missing[@]}"; do
    case "$tool" in
      python3) pkgs+=(python3) ;; make) pkgs+=(make) ;; g++) pkgs+=(g++) ;;
      tiffinfo) pkgs+=(libtiff-tools) ;; DejaVuSansMono.ttf) pkgs+=(fonts-dejavu-core) ;;
      wqy-microhei.ttc) pkgs+=(fonts-wqy-microhei) ;;
      soffice) pkgs+=(libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui fonts-liberation2 fonts-crosextra-carlito) ;;
      gs) pkgs+=(ghostscript) ;; pdftotext) pkgs+=(poppler-utils) ;;
      sipp) pkgs+=(sip-tester) ;; rtpengine) pkgs+=(rtpengine-daemon) ;; openssl) pkgs+=(openssl) ;;
      efax) pkgs+=(efax) ;; pdftoppm) pkgs+=(poppler-utils) ;;
      dnsmasq) pkgs+=(dnsmasq-base) ;; kamailio) pkgs+=(kamailio) ;;
      initdb) pkgs+=(postgresql) ;; chromium) pkgs+=(chromium) ;;
      sshd) pkgs+=(openssh-server) ;;
      pkg-config) pkgs+=(pkg-config) ;; libspandsp-dev) pkgs+=(libspandsp-dev) ;; tiffio.h) pkgs+=(libtiff-dev) ;;
    esac
  done
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  if [[ " ${pkgs[*]} " == *" openssh-server "* ]] && [ ! -e /etc/ssh/sshd_not_to_be_run ]; then
    # Keeps the package's own sshd service from starting, now and at boot (see above).
    $SUDO mkdir -p /etc/ssh && $SUDO touch /etc/ssh/sshd_not_to_be_run
  fi
  echo "install: installing the Debian packages ${pkgs[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
  # Debian starts the Kamailio it installs on port 5060 (all addresses): the tests run their own,
  # and a node's SIP line needs the port.
  if [[ " ${pkgs[*]} " == *" kamailio "* ]] && command -v systemctl >/dev/null 2>&1; then
    $SUDO systemctl disable --now kamailio.service >/dev/null 2>&1 || true
  fi
fi

# better-sqlite3 builds from source when its prebuilt binary cannot be downloaded.
npm ci --no-audit --no-fund
npm run build
bash scripts/build-native.sh

if [ "$START" -eq 1 ]; then
  export FAXLINE_DATA_DIR="${FAXLINE_DATA_DIR:-./data}"
  if ! node bin/faxline.js accounts list --json | grep -q '"login": "demo"'; then
    node bin/faxline.js accounts create --customer 99999TE --login demo --password demo-password --test --manager
  fi
  echo "install: starting Faxline on port ${FAXLINE_PORT:-8080} (demo test login: demo / demo-password, customer 99999TE)"
  # glibc malloc settings that let a node give memory back after large requests (docs/deployment.md, "Memory").
  export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-131072}" MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}"
  exec node bin/faxline.js serve
fi
