#!/bin/bash
# Installs the wearhouse package on this machine (as root), checks what it installed (the binary, man pages,
# completions in each shell's own loader, the units, user and group), then purges it and checks that nothing it
# installed is left. The wearhouse user and group stay after the purge on purpose (debian/postrm says why).
# Usage: Tests/Package/test-deb.sh PACKAGE.deb
set -u
deb=$1
failures=0
passes=0
check() {
    local what=$1
    shift
    if "$@" > /tmp/wearhouse-test-deb.out 2>&1; then
        passes=$((passes + 1))
    else
        failures=$((failures + 1))
        echo "FAILED: $what"
        sed 's/^/    /' /tmp/wearhouse-test-deb.out | head -20
    fi
}

if dpkg-query -W -f='${Status}' wearhouse 2>/dev/null | grep -q installed; then
    echo "wearhouse is installed on this machine already; the test would remove it" >&2
    exit 1
fi

check "dpkg -i" dpkg -i "$deb"
files=$(dpkg -L wearhouse)

check "wearhouse --version from the PATH" bash -c '[ "$(command -v wearhouse)" = /usr/bin/wearhouse ] &&
    wearhouse --version | grep -q "^wearhouse "'
check "man -w wearhouse" bash -c '[ "$(man -w wearhouse)" = /usr/share/man/man1/wearhouse.1.gz ]'
check "man -w 5 wearhouse.conf" man -w 5 wearhouse.conf
check "a page per command" man -w wearhouse-samples wearhouse-store-check wearhouse-run
for page in /usr/share/man/man1/wearhouse*.1.gz /usr/share/man/man5/wearhouse.conf.5.gz; do
    check "groff renders $page without warnings" bash -c \
        "zcat '$page' | groff -man -Tutf8 -ww -z 2>&1 | { ! grep .; }"
done
check "wearhouse.conf(5) names every key" bash -c 'zcat /usr/share/man/man5/wearhouse.conf.5.gz | groff -man -Tutf8 \
    2>/dev/null | col -b > /tmp/wearhouse-conf5.txt; for key in url adapter bus connect-timeout batch-size \
    heartbeat-series-window log-level source-name; do grep -q "^ *$key = " /tmp/wearhouse-conf5.txt || { echo "no $key"; exit 1; }; done'

check "the unit files" test -f /usr/lib/systemd/system/wearhouse.service
check "sysusers, tmpfiles, udev, D-Bus" test -f /usr/lib/sysusers.d/wearhouse.conf -a -f /usr/lib/tmpfiles.d/wearhouse.conf \
    -a -f /usr/lib/udev/rules.d/70-wearhouse.rules -a -f /usr/share/dbus-1/system.d/org.wearhouse.Health1.conf \
    -a -f /usr/share/dbus-1/interfaces/org.wearhouse.Health1.xml
check "ExecStart is /usr/bin/wearhouse" grep -qx "ExecStart=/usr/bin/wearhouse run" /usr/lib/systemd/system/wearhouse.service
check "systemd-analyze verify" systemd-analyze verify /usr/lib/systemd/system/wearhouse.service
check "enabled, not started" test -L /etc/systemd/system/multi-user.target.wants/wearhouse.service
check "the wearhouse user" getent passwd wearhouse
check "the wearhouse group" getent group wearhouse
check "/var/lib/wearhouse" bash -c '[ "$(stat -c %U:%G:%a /var/lib/wearhouse)" = wearhouse:wearhouse:2750 ] ||
    { stat -c %U:%G:%a /var/lib/wearhouse; exit 1; }'
check "/etc/wearhouse/wearhouse.conf" bash -c '[ "$(stat -c %U:%G:%a /etc/wearhouse/wearhouse.conf)" = root:wearhouse:640 ] ||
    { stat -c %U:%G:%a /etc/wearhouse/wearhouse.conf; exit 1; }'

# Completions, through each shell's own loader.
check "bash: bash-completion loads it" bash -c 'source /usr/share/bash-completion/bash_completion &&
    __load_completion wearhouse && complete -p wearhouse | grep -q _wearhouse'
check "bash: Tab after --type offers type identifiers" bash -c 'source /usr/share/bash-completion/completions/wearhouse &&
    COMP_LINE="wearhouse samples --type hear" COMP_POINT=${#COMP_LINE} COMP_WORDS=(wearhouse samples --type hear) COMP_CWORD=3 &&
    _wearhouse && printf "%s\n" "${COMPREPLY[@]}" | grep -qx heartRate'
check "bash: Tab completes commands" bash -c 'source /usr/share/bash-completion/completions/wearhouse &&
    COMP_LINE="wearhouse sam" COMP_POINT=${#COMP_LINE} COMP_WORDS=(wearhouse sam) COMP_CWORD=1 &&
    _wearhouse && [ "${COMPREPLY[*]}" = samples ]'
check "zsh: compinit finds _wearhouse" zsh -fc 'autoload -Uz compinit && compinit -u -d /tmp/wearhouse-zcompdump &&
    [[ $_comps[wearhouse] == _wearhouse ]] && autoload +X _wearhouse && (( $+functions[_wearhouse] ))'
check "fish: the script parses" fish -n /usr/share/fish/vendor_completions.d/wearhouse.fish
check "fish: complete -C offers type identifiers" bash -c 'fish -c "complete -C \"wearhouse stats --type step\"" |
    grep -q "^stepCount"'

check "dpkg --purge" dpkg --purge wearhouse
left=""
while IFS= read -r path; do
    [ -f "$path" ] || [ -L "$path" ] || continue
    left="$left $path"
done <<< "$files"
check "no file left after purge" test -z "$left"
[ -z "$left" ] || echo "    left:$left"
check "/var/lib/wearhouse and /etc/wearhouse gone" test ! -e /var/lib/wearhouse -a ! -e /etc/wearhouse
check "no enable link left" test ! -e /etc/systemd/system/multi-user.target.wants/wearhouse.service -a \
    ! -L /etc/systemd/system/multi-user.target.wants/wearhouse.service

echo "package: $passes passed, $failures failed"
[ "$failures" = 0 ]
