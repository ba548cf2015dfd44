# shellcheck shell=bash disable=SC2154 # prog and usage are the caller's
# tools/lib_args.sh: sourced by the scripts of bench/ and tools/ (not a program itself), to check
# their command lines and environment as the stages check theirs, before any work: a bad input is
# one line on stderr, "<prog>: error: ...", naming it, and exit 1; nothing is made or changed.
# The caller sets prog (its name in those lines) and usage (its usage line) first.
#   die MESSAGE...                 the error line (control characters shown as '?') and exit 1
#   shown TEXT                     TEXT with control characters and other bytes shown as '?'
#   help_or_flags ARGS...          --help beside anything else, or twice, is refused; --help
#                                  alone sets help_asked (the caller then checks its environment
#                                  as it would without arguments: `[ -z "$help_asked" ] || set --`)
#   help_done                      after every check: with help_asked, the usage (the script's
#                                  header) on stdout and exit 0
#   no_flags ARGS...               refuses any argument starting with '-' (the scripts that take
#                                  only names)
#   out_dir LABEL PATH             PATH can be made (or is) a folder to write into
#   in_dir LABEL PATH              PATH is a folder to read
#   in_file LABEL PATH             PATH is a regular file to read (a FIFO is refused, not opened)
#   whole LABEL VALUE LO HI        VALUE is a plain decimal whole number in LO..HI
#   words LABEL VALUE ALLOWED...   every word of VALUE is one of ALLOWED
#   hangul_font                    a font with Hangul is known, for the Korean figures (run from
#                                  the repository's root; compare/common.py says what is missing)

shown() { printf '%s' "$*" | tr -c '[:print:]' '?'; }

die() {
    printf '%s: error: %s\n' "${prog:-${0##*/}}" "$(shown "$*")" >&2
    exit 1
}

# has_control TEXT: TEXT holds a C0 or C1 control character or DEL (a newline, an escape, U+009B)
has_control() {
    local LC_ALL=C
    [[ $1 == *[[:cntrl:]]* || $1 == *$'\xc2'[$'\x80'-$'\x9f']* ]]
}

help_or_flags() {
    local a n=0
    for a in "$@"; do
        case $a in
            --help) n=$((n + 1)) ;;
            --help=*) die "--help takes no value" ;;
        esac
    done
    [ "$n" -le 1 ] || die "--help given twice"
    help_asked=""
    [ "$n" -eq 1 ] || return 0
    [ $# -eq 1 ] || die "--help goes alone (usage: $usage)"
    help_asked=1
}

help_done() {
    [ -n "${help_asked:-}" ] || return 0
    echo "usage: $usage"
    # the header comment, from its second line to the first line that is not a comment
    sed -n '2,/^[^#]/{/^#/!d; /^# shellcheck/d; s/^# \{0,1\}//; p}' "${here:-$0}"
    exit 0
}

no_flags() {
    local a
    for a in "$@"; do
        case $a in
            -*) die "unknown flag '$a' (usage: $usage)" ;;
        esac
    done
}

# not_special LABEL PATH: the checks every name gets: not empty, no control character, not a
# symbolic link to nothing
not_special() {
    [ -n "$2" ] || die "$1: empty name"
    ! has_control "$2" || die "$1: '$2' holds a control character"
    if [ -L "$2" ] && [ ! -e "$2" ]; then die "$1: $2 is a symbolic link to nothing"; fi
}

out_dir() {
    local label=$1 path=$2 head real
    not_special "$label" "$path"
    if [ -e "$path" ] && [ ! -d "$path" ]; then die "$label: $path is not a directory"; fi
    head=$path
    while [ ! -e "$head" ] && [ ! -L "$head" ]; do head=$(dirname -- "$head"); done
    if [ -L "$head" ] && [ ! -e "$head" ]; then die "$label: $head is a symbolic link to nothing"; fi
    [ -d "$head" ] || die "$label: cannot create output directory $path: Not a directory"
    real=$(readlink -f -- "$head")
    case $real/ in
        /proc/* | /sys/*) die "$label: cannot create output directory $path: ${real} is on a kernel file system" ;;
    esac
    { [ -w "$head" ] && [ -x "$head" ]; } || die "$label: cannot create output directory $path: $head is not writable"
}

in_dir() {
    not_special "$1" "$2"
    [ -e "$2" ] || die "$1: $2: no such folder"
    [ -d "$2" ] || die "$1: $2 is not a directory"
    { [ -r "$2" ] && [ -x "$2" ]; } || die "$1: $2: permission denied"
}

in_file() {
    not_special "$1" "$2"
    [ -e "$2" ] || die "$1: $2: no such file"
    [ ! -d "$2" ] || die "$1: $2 is a directory, not a file"
    [ -f "$2" ] || die "$1: $2 is not a regular file"
    [ -r "$2" ] || die "$1: $2: permission denied"
}

whole() {
    local label=$1 value=$2 lo=$3 hi=$4
    [[ $value =~ ^[0-9]{1,9}$ ]] || die "$label: '$value' is not a whole number"
    [ $((10#$value)) -ge "$lo" ] || die "$label: $value is too small (at least $lo)"
    [ $((10#$value)) -le "$hi" ] || die "$label: $value is too large (at most $hi)"
}

words() {
    local label=$1 value=$2 w a ok list
    shift 2
    ! has_control "$value" || die "$label: '$value' holds a control character"
    read -r -a list <<<"$value"
    [ ${#list[@]} -gt 0 ] || die "$label: empty"
    for w in "${list[@]}"; do
        ok=""
        for a in "$@"; do [ "$w" = "$a" ] && ok=1; done
        [ -n "$ok" ] || die "$label: unknown part '$w' (parts: $*)"
    done
}

hangul_font() {
    local why
    why=$(python3 -c 'import sys; sys.path.insert(0, "compare"); import common; print(common.hangul_font_missing() or "")')
    [ -z "$why" ] || die "$why"
}
