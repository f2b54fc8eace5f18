#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Regenerates po/qiblactl.pot from the tr("…") strings of the files in po/POTFILES (qiblactl's
# words for people), then merges it into each language of po/LINGUAS (msgmerge). The file is left
# as it is (date included) when no message or comment changed.
set -eu
cd "$(dirname "$0")/.."
version=$(sed -n 's/^public let qiblaVersion = "\(.*\)"/\1/p' Sources/Interface/PropertyValue.swift)
new=$(mktemp)
trap 'rm -f "$new"' EXIT
xgettext --language=C --keyword=tr --from-code=UTF-8 --add-comments=TRANSLATORS: \
    --add-location=file --package-name=qiblactl --package-version="${version:-0}" \
    --msgid-bugs-address=https://github.com/qiblad/qiblad/issues --copyright-holder="The qiblad developers" \
    --files-from=po/POTFILES --output="$new"
sed -i 's/^# SOME DESCRIPTIVE TITLE\.$/# qiblactl: the template of its translations (its words for people)./' "$new"
unchanged() { grep -v '^"POT-Creation-Date:' "$1"; }
if [ -f po/qiblactl.pot ] && [ "$(unchanged "$new")" = "$(unchanged po/qiblactl.pot)" ]; then
    echo "po/qiblactl.pot: up to date"
else
    cp "$new" po/qiblactl.pot
    echo "po/qiblactl.pot: $(grep -c '^msgid "' po/qiblactl.pot) messages (the first is the header)"
fi
for language in $(sed -e 's/#.*//' po/LINGUAS); do
    [ -f "po/$language.po" ] && msgmerge --quiet --update --backup=off "po/$language.po" po/qiblactl.pot
done
