#!/usr/bin/env bash
# WordNet 3.0 for nltk, laid out where `sentaug.augment.wordnet` looks for it (<repo>/nltk_data/corpora/wordnet,
# or $SENTAUG_NLTK_DATA/...), from the first of these that works:
#   1. a WordNet 3.0 "dict" folder: $WORDNET_SRC, else Debian's /usr/share/wordnet (wordnet-base +
#      wordnet-sense-index), installed with apt-get where it is there and may be used (root, or sudo without a
#      password);
#   2. NLTK's wordnet.zip, downloaded from nltk_data on GitHub and checked against its sha256 pin
#      (`sentaug download wordnet`, src/sentaug/data/sources.yaml), or taken from a mirror holding
#      wordnet/wordnet.zip ($SENTAUG_MIRROR), like every other download: no apt, no sudo (a Mac, a cluster).
#   scripts/setup_wordnet.sh              (idempotent: does nothing when the layout is already complete)
#   SENTAUG_NLTK_DATA=/some/dir scripts/setup_wordnet.sh
#   WORDNET_SRC=/path/to/dict scripts/setup_wordnet.sh   (any WordNet 3.0 "dict" folder instead of Debian's)
#   WORDNET_FROM=download scripts/setup_wordnet.sh        (skip 1: what a machine without apt does)
# Why not `nltk.download("wordnet")`: it does not check what it fetched against a pin, and takes no mirror.
# nltk reads Debian's files after three fixes: files are copied (nltk does not follow every symlink the
# Debian package uses), `index.sense` comes from the second package, and `lexnames` (which Debian does not
# ship) is rebuilt from the lexnames(5WN) man page: 45 lexicographer files, "number<TAB>name<TAB>pos".
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${WORDNET_SRC:-/usr/share/wordnet}
NLTK_ROOT=${SENTAUG_NLTK_DATA:-$PWD/nltk_data}
DEST=$NLTK_ROOT/corpora/wordnet
FILES="adj.exc adv.exc noun.exc verb.exc data.adj data.adv data.noun data.verb
       index.adj index.adv index.noun index.verb index.sense cntlist.rev"
PY=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}

complete() {
  for f in $FILES lexnames; do [ -s "$DEST/$f" ] || return 1; done
}
have_dict() {
  [ -s "$SRC/data.noun" ] && [ -s "$SRC/index.sense" ]
}
# NLTK's wordnet.zip, pinned, into $NLTK_ROOT/corpora/wordnet (the download machinery swaps it in atomically).
download() {
  echo "wordnet: no WordNet 3.0 dict folder; downloading NLTK's wordnet.zip (sha256-pinned)"
  PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m sentaug.cli download wordnet --out "$NLTK_ROOT" || {
    echo "wordnet: could not set up WordNet 3.0: install Debian's wordnet-base and wordnet-sense-index, set" \
         "WORDNET_SRC to a WordNet 3.0 dict folder, or SENTAUG_MIRROR to a folder holding wordnet/wordnet.zip" >&2
    exit 1
  }
  complete || { echo "wordnet: the download did not lay out $DEST completely" >&2; exit 1; }
  echo "wordnet: WordNet 3.0 set up in $DEST (from NLTK's wordnet.zip)"
  exit 0
}
if complete; then
  echo "wordnet: already set up in $DEST"
  exit 0
fi
[ "${WORDNET_FROM:-}" = download ] && download

if ! have_dict && [ -z "${WORDNET_SRC:-}" ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  if [ -z "$SUDO" ] || sudo -n true 2>/dev/null; then
    echo "wordnet: installing Debian packages wordnet-base wordnet-sense-index"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      wordnet-base wordnet-sense-index >/dev/null 2>&1 \
      || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -q --no-install-recommends wordnet-base wordnet-sense-index >/dev/null 2>&1; } \
      || echo "wordnet: apt-get could not install them"
  fi
fi
if ! have_dict; then
  if [ -n "${WORDNET_SRC:-}" ]; then
    echo "wordnet: WORDNET_SRC=$WORDNET_SRC is not a WordNet 3.0 dict folder (no data.noun or index.sense)" >&2
    exit 1
  fi
  download
fi

TMP="$DEST.tmp.$$"
rm -rf "$TMP"
mkdir -p "$TMP"
for f in $FILES; do
  cp -L "$SRC/$f" "$TMP/$f"
done
# lexnames(5WN): the lexicographer file numbers, names and syntactic categories (1 noun, 2 verb, 3 adj, 4 adv)
i=0
for entry in adj.all:3 adj.pert:3 adv.all:4 noun.Tops:1 noun.act:1 noun.animal:1 noun.artifact:1 \
    noun.attribute:1 noun.body:1 noun.cognition:1 noun.communication:1 noun.event:1 noun.feeling:1 \
    noun.food:1 noun.group:1 noun.location:1 noun.motive:1 noun.object:1 noun.person:1 \
    noun.phenomenon:1 noun.plant:1 noun.possession:1 noun.process:1 noun.quantity:1 noun.relation:1 \
    noun.shape:1 noun.state:1 noun.substance:1 noun.time:1 verb.body:2 verb.change:2 verb.cognition:2 \
    verb.communication:2 verb.competition:2 verb.consumption:2 verb.contact:2 verb.creation:2 \
    verb.emotion:2 verb.motion:2 verb.perception:2 verb.possession:2 verb.social:2 verb.stative:2 \
    verb.weather:2 adj.ppl:3; do
  printf '%02d\t%s\t%s\n' "$i" "${entry%:*}" "${entry#*:}"
  i=$((i + 1))
done > "$TMP/lexnames"
[ "$(wc -l < "$TMP/lexnames")" = 45 ] || { echo "wordnet: lexnames has the wrong length" >&2; exit 1; }

# swap in atomically (a half-copied folder is never visible under the final name)
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST.old"
[ -e "$DEST" ] && mv "$DEST" "$DEST.old"
mv "$TMP" "$DEST"
rm -rf "$DEST.old"
echo "wordnet: WordNet 3.0 set up in $DEST"
