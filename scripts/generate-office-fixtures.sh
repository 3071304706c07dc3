#!/usr/bin/env bash
# Writes the office fixtures of test/unit/render-convert.test.ts into test/fixtures/office/ with
# LibreOffice, from the sources below (HTML and flat ODF, so that their content is readable here):
#
#   letter.docx                      from letter.html        1 page   (also the golden DOCX page)
#   two-pages.odt, two-pages.doc     from two-pages.fodt     2 pages  (a page break)
#   two-sheets.ods, .xlsx, .xls      from two-sheets.fods    2 pages  (one sheet per page)
#   three-slides.pptx, .ppt          from three-slides.fodp  3 pages  (one slide per page)
#   encrypted.odt, .doc, .ods, .xls  password "secret", saved by a Basic macro
#
# The files are committed: a new run gives other bytes (time stamps, ids), the same content.
# LibreOffice 7.4 cannot write a password-protected DOCX/XLSX from a macro (the save hangs), so the
# test builds the OLE container of an encrypted OOXML file itself.
# Needs soffice (Debian: libreoffice-writer-nogui, libreoffice-calc-nogui, libreoffice-impress-nogui).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/test/fixtures/office"
mkdir -p "$out"
soffice=$(command -v soffice || command -v libreoffice || true)
if [ -z "$soffice" ]; then
  echo "soffice not found: install libreoffice-writer-nogui, libreoffice-calc-nogui and libreoffice-impress-nogui" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"
mkdir -p "$HOME" "$work/src" "$work/out"
profile="file://$work/profile"

# Runs soffice in its own process group and kills the whole group after 120 s (soffice starts
# oosplash and soffice.bin; `timeout` alone would leave them running).
run_soffice() {
  setsid "$soffice" "-env:UserInstallation=$profile" --headless --norestore --nologo "$@" </dev/null &
  local pid=$! waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge 1200 ]; then
      kill -KILL -- "-$pid" 2>/dev/null || true
      echo "soffice $* took longer than 120 s and was killed" >&2
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  wait "$pid"
}

cat >"$work/src/letter.html" <<'EOF'
<!DOCTYPE html>
<html lang="de">
<head><meta charset="utf-8"><title>Faxline fixture: letter</title></head>
<body>
<h1>Faxline fixture: letter</h1>
<p>Sehr geehrte Damen und Herren,</p>
<p>this one-page letter is a <b>Word document</b> (DOCX), converted to PDF by LibreOffice. Grüße, 5 €.</p>
<table border="1"><tr><th>Item</th><th>Amount</th></tr><tr><td>Fax pages</td><td>3</td></tr></table>
<p>Mit freundlichen Grüßen<br>Faxline</p>
</body>
</html>
EOF

cat >"$work/src/two-pages.fodt" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
  xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
  office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:automatic-styles>
  <style:style style:name="PageBreak" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style>
 </office:automatic-styles>
 <office:body>
  <office:text>
   <text:h text:outline-level="1">Faxline fixture: two pages</text:h>
   <text:p>This is page one. Grüße, 5 €.</text:p>
   <text:p text:style-name="PageBreak">This is page two.</text:p>
  </office:text>
 </office:body>
</office:document>
EOF

sheet() { # name, text, number
  cat <<EOF
   <table:table table:name="$1">
    <table:table-row>
     <table:table-cell office:value-type="string"><text:p>$2</text:p></table:table-cell>
    </table:table-row>
    <table:table-row>
     <table:table-cell office:value-type="float" office:value="$3"><text:p>$3</text:p></table:table-cell>
    </table:table-row>
   </table:table>
EOF
}
cat >"$work/src/two-sheets.fods" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
  office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
 <office:body>
  <office:spreadsheet>
$(sheet Invoices "Faxline fixture sheet one" 42)
$(sheet Totals "Faxline fixture sheet two" 4711)
  </office:spreadsheet>
 </office:body>
</office:document>
EOF

slide() { # number
  cat <<EOF
   <draw:page draw:name="Slide$1">
    <draw:frame svg:x="2cm" svg:y="2cm" svg:width="22cm" svg:height="4cm">
     <draw:text-box><text:p>Faxline fixture slide $1 of 3</text:p></draw:text-box>
    </draw:frame>
   </draw:page>
EOF
}
cat >"$work/src/three-slides.fodp" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
  xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
  office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.presentation">
 <office:body>
  <office:presentation>
$(slide 1)
$(slide 2)
$(slide 3)
  </office:presentation>
 </office:body>
</office:document>
EOF

run_soffice --infilter="HTML (StarWriter)" --convert-to 'docx:MS Word 2007 XML' --outdir "$work/out" "$work/src/letter.html"
run_soffice --convert-to odt --outdir "$work/out" "$work/src/two-pages.fodt"
run_soffice --convert-to 'doc:MS Word 97' --outdir "$work/out" "$work/src/two-pages.fodt"
run_soffice --convert-to ods --outdir "$work/out" "$work/src/two-sheets.fods"
run_soffice --convert-to 'xlsx:Calc MS Excel 2007 XML' --outdir "$work/out" "$work/src/two-sheets.fods"
run_soffice --convert-to 'xls:MS Excel 97' --outdir "$work/out" "$work/src/two-sheets.fods"
run_soffice --convert-to 'pptx:Impress MS PowerPoint 2007 XML' --outdir "$work/out" "$work/src/three-slides.fodp"
run_soffice --convert-to 'ppt:MS PowerPoint 97' --outdir "$work/out" "$work/src/three-slides.fodp"

# Password-protected copies: a Basic macro in the (throw-away) profile opens a document and saves
# it with a password. The profile exists after the conversions above.
cat >"$work/profile/user/basic/Standard/Module1.xba" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1" script:language="StarBasic">
Sub SaveWithPassword(inUrl As String, outUrl As String, filterName As String)
  Dim loadArgs(0) As New com.sun.star.beans.PropertyValue
  loadArgs(0).Name = &quot;Hidden&quot;
  loadArgs(0).Value = True
  Dim doc As Object
  doc = StarDesktop.loadComponentFromURL(inUrl, &quot;_blank&quot;, 0, loadArgs())
  Dim storeArgs(1) As New com.sun.star.beans.PropertyValue
  storeArgs(0).Name = &quot;FilterName&quot;
  storeArgs(0).Value = filterName
  storeArgs(1).Name = &quot;Password&quot;
  storeArgs(1).Value = &quot;secret&quot;
  doc.storeToURL(outUrl, storeArgs())
  doc.close(True)
End Sub
</script:module>
EOF
encrypt() { # source, target, filter
  run_soffice "macro:///Standard.Module1.SaveWithPassword(\"file://$work/src/$1\",\"file://$work/out/$2\",\"$3\")"
}
encrypt two-pages.fodt encrypted.odt writer8
encrypt two-pages.fodt encrypted.doc 'MS Word 97'
encrypt two-sheets.fods encrypted.ods calc8
encrypt two-sheets.fods encrypted.xls 'MS Excel 97'

for name in letter.docx two-pages.odt two-pages.doc two-sheets.ods two-sheets.xlsx two-sheets.xls \
  three-slides.pptx three-slides.ppt encrypted.odt encrypted.doc encrypted.ods encrypted.xls; do
  if [ ! -s "$work/out/$name" ]; then
    echo "LibreOffice did not write $name" >&2
    exit 1
  fi
  cp "$work/out/$name" "$out/$name"
  echo "wrote test/fixtures/office/$name ($(stat -c %s "$out/$name") bytes)"
done
