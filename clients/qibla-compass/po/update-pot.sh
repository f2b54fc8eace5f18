#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerates po/qibla-compass.pot from the tr("…") strings of the files in po/POTFILES.
# Swift string literals lex as C ones for xgettext. The file is left as it is (date included)
# when no message or comment changed, so a run without changes leaves git clean.
# Then each language in po/LINGUAS takes the new template in (msgmerge).
set -eu
cd "$(dirname "$0")/.."
version=$(sed -n 's/^public let qiblaVersion = "\(.*\)"/\1/p' ../../Sources/Interface/PropertyValue.swift)
new=$(mktemp)
xgettext --language=C --keyword=tr --from-code=UTF-8 --add-comments=TRANSLATORS: \
    --add-location=file --package-name=qibla-compass --package-version="${version:-0}" \
    --msgid-bugs-address=https://github.com/qiblad/qiblad/issues --copyright-holder="The qiblad developers" \
    --files-from=po/POTFILES --output="$new"
# The desktop entry's and the metainfo's texts join the same template (msgfmt --desktop and --xml
# put them back into the installed files; the metainfo's ITS rules come with appstream).
data=$(mktemp)
trap 'rm -f "$new" "$data"' EXIT
xgettext --language=Desktop --from-code=UTF-8 --add-location=file --output="$data.desktop.pot" data/io.github.qiblad.Compass.desktop
xgettext --from-code=UTF-8 --add-location=file --output="$data.xml.pot" data/io.github.qiblad.Compass.metainfo.xml
msgcat --use-first --add-location=file --output-file="$data" "$new" "$data.desktop.pot" "$data.xml.pot"
rm -f "$data.desktop.pot" "$data.xml.pot"
cp "$data" "$new"
sed -i 's/^# SOME DESCRIPTIVE TITLE\.$/# Qibla Compass (qibla-compass): the template of its translations./' "$new"
unchanged() { grep -v '^"POT-Creation-Date:' "$1"; }
if [ -f po/qibla-compass.pot ] && [ "$(unchanged "$new")" = "$(unchanged po/qibla-compass.pot)" ]; then
    echo "po/qibla-compass.pot: up to date"
else
    cp "$new" po/qibla-compass.pot
    echo "po/qibla-compass.pot: $(grep -c '^msgid "' po/qibla-compass.pot) messages (the first is the header)"
fi
for language in $(sed -e 's/#.*//' po/LINGUAS); do
    msgmerge --quiet --update --backup=off "po/$language.po" po/qibla-compass.pot
done
