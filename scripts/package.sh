#!/usr/bin/env bash
# Builds the .deb and the .rpm for s390x (the guests) and for this host,
# then checks what was built and fails on the first thing wrong:
# - the binaries: the `dist` profile (stripped), for the right machine,
#   without the test build's fault hooks; the s390x one run under
#   qemu-s390x (`--version`, a short `sim --report`) where it is installed;
# - the man pages: rendered by man with every groff warning an error;
# - the packages: lintian and rpmlint without errors (warnings listed),
#   the files a site needs, compressed pages, maintainer scripts and
#   scriptlets that reload systemd and stop and disable on removal;
# - the unit, as installed: `systemd-analyze verify` without a word, and
#   `systemd-analyze security --offline=yes` below 5.
# Needs what scripts/install-cross.sh installs.
#
# usage: scripts/package.sh [TARGET...]
#   default targets: s390x-unknown-linux-gnu and this host's
#   -> target/packages/*.deb, target/packages/*.rpm
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
fail() { echo "package: $*" >&2; exit 1; }
for tool in cargo-deb rpmbuild rpmlint lintian systemd-analyze man file dpkg-deb; do
    command -v "$tool" >/dev/null || fail "$tool is missing: run scripts/install-cross.sh"
done
host=$(rustc -vV | sed -n 's/^host: //p')
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(s390x-unknown-linux-gnu "$host")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
out=target/packages
rm -rf target/package "$out"
mkdir -p "$out"

# The binary for one target. The host's comes from the project's
# toolchain; another machine's from Debian's Rust, whose standard library
# is built for it from Debian's sources, in a target directory of its own
# (the two compilers would otherwise rebuild each other's build scripts).
target_dir() { if [ "$1" = "$host" ]; then echo target; else echo target/cross; fi; }
build() {
    local t=$1
    if [ "$t" = "$host" ]; then
        cargo build --profile dist --locked --quiet --target "$t"
    else
        local gcc=${t%%-*}-linux-gnu-gcc
        command -v "$gcc" >/dev/null || fail "$gcc is missing: run scripts/install-cross.sh"
        local var
        var=CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$t")_LINKER
        env "$var=$gcc" RUSTC_BOOTSTRAP=1 RUSTC=/usr/bin/rustc CARGO_TARGET_DIR=target/cross \
            /usr/bin/cargo build -Z build-std=std,panic_abort --profile dist --locked --quiet --target "$t"
    fi
    # plugtop, and plugtop-run: `plugtop run` alone, which `plugtop run`
    # replaces itself with (src/cli/run_exe.rs).
    local bin kind want
    for bin in "$(target_dir "$t")/$t/dist/plugtop" "$(target_dir "$t")/$t/dist/plugtop-run"; do
        # The test build's fault hooks (the fault-injection feature) must
        # never be shipped.
        if grep -q PLUGTOP_TEST_WRITE_TOKEN "$bin"; then
            fail "$bin was built with the test-only fault hooks"
        fi
        kind=$(file -b "$bin")
        case "$t" in
            s390x-*) want="IBM S/390" ;;
            x86_64-*) want="x86-64" ;;
            aarch64-*) want="ARM aarch64" ;;
            *) want="" ;;
        esac
        [[ "$kind" == *"$want"* ]] || fail "$bin is not for $t: $kind"
        [[ "$kind" == *", stripped"* ]] || fail "$bin is not stripped: $kind"
        echo "$bin: $(du -h "$bin" | cut -f1), $kind" | cut -c1-160
    done
}

echo "== build"
build "$host"
for t in "${targets[@]}"; do
    [ "$t" = "$host" ] || build "$t"
done

echo "== man pages and completions"
hostbin=target/$host/dist/plugtop
"$hostbin" generate man target/package/man >/dev/null
mkdir -p target/package/completions
for shell in bash zsh fish; do
    "$hostbin" generate completions $shell >"target/package/completions/$shell"
done
mv target/package/completions/bash target/package/completions/plugtop.bash
mv target/package/completions/zsh target/package/completions/_plugtop
mv target/package/completions/fish target/package/completions/plugtop.fish
# Every page renders, and a groff warning (an unknown macro, a bad
# escape) fails the build: lintian would only warn.
for page in target/package/man/man1/*.1 target/package/man/man5/*.5; do
    said=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail "$page does not render: $said"
    [ -z "$said" ] || fail "$page: $said"
done
for section in SIGNALS FILES "EXIT STATUS"; do
    grep -q "^\.SH $section" target/package/man/man1/plugtop-run.1 || fail "plugtop-run(1) has no $section"
done
echo ok

rpm_arch() { case "$1" in s390x-*) echo s390x ;; x86_64-*) echo x86_64 ;; aarch64-*) echo aarch64 ;; *) echo "${1%%-*}" ;; esac; }

# The .rpm's tree, as rpmbuild installs it.
stage_rpm() {
    local t=$1 root=$2
    install -Dm755 "$(target_dir "$t")/$t/dist/plugtop" "$root/usr/bin/plugtop"
    install -Dm755 "$(target_dir "$t")/$t/dist/plugtop-run" "$root/usr/bin/plugtop-run"
    mkdir -p "$root/usr/share/man/man1" "$root/usr/share/man/man5"
    for page in target/package/man/man1/*.1; do gzip -9n <"$page" >"$root/usr/share/man/man1/$(basename "$page").gz"; done
    gzip -9n <target/package/man/man5/plugtop-rules.5 >"$root/usr/share/man/man5/plugtop-rules.5.gz"
    install -Dm644 target/package/completions/plugtop.bash "$root/usr/share/bash-completion/completions/plugtop"
    install -Dm644 target/package/completions/_plugtop "$root/usr/share/zsh/site-functions/_plugtop"
    install -Dm644 target/package/completions/plugtop.fish "$root/usr/share/fish/vendor_completions.d/plugtop.fish"
    install -Dm644 examples/plugtop.service "$root/usr/lib/systemd/system/plugtop.service"
    install -Dm644 packaging/plugtop.default "$root/etc/sysconfig/plugtop"
    local doc=$root/usr/share/doc/plugtop
    mkdir -p "$doc/examples/rules" "$doc/examples/prometheus" "$doc/examples/grafana"
    install -m644 docs/*.md "$doc/"
    install -m644 examples/rules/*.conf "$doc/examples/rules/"
    install -m644 examples/prometheus/*.yml "$doc/examples/prometheus/"
    install -m644 examples/grafana/plugtop.json "$doc/examples/grafana/"
}

# Signs an .rpm: with the key PLUGTOP_RPM_KEY names (in GNUPGHOME), else
# with a key made for this run only, so the package is checked as a
# signed one; a site re-signs with its own (rpmsign --resign).
sign_rpm() {
    local key=${PLUGTOP_RPM_KEY:-} home=${GNUPGHOME:-$HOME/.gnupg}
    if [ -z "$key" ]; then
        home=$PWD/target/package/gnupg
        if [ ! -d "$home" ]; then
            mkdir -m700 -p "$home"
            gpg --homedir "$home" --batch --quiet --passphrase '' \
                --quick-gen-key "plugtop build key <plugtop@example.org>" rsa3072 sign 1d 2>/dev/null
        fi
        key="plugtop build key"
        echo "(signing with a key made for this run; set PLUGTOP_RPM_KEY for the site's)"
    fi
    local said
    # The public key, for rpmlint's check of the signature (below).
    gpg --homedir "$home" --armor --export "$key" >target/package/rpm-key.asc
    said=$(rpmsign --define "__gpg $(command -v gpg)" --define "_gpg_name $key" --define "_gpg_path $home" \
        --addsign "$1" 2>&1) || fail "cannot sign $1: $said"
}

debs=() rpms=()
for t in "${targets[@]}"; do
    echo "== packages for $t"
    for licence in LICENSE-MIT LICENSE-APACHE; do
        [ -s "$licence" ] || fail "$licence is missing: the packages are MIT OR Apache-2.0"
    done
    deb=$(CARGO_TARGET_DIR=$(target_dir "$t") cargo deb --no-build --no-strip --quiet \
        --target "$t" --profile dist --output "$out/" 2>&1 | tail -1)
    [ -f "$deb" ] || fail "cargo deb made no package: $deb"
    stage=$PWD/target/package/rpm-$t
    stage_rpm "$t" "$stage/root"
    rpmbuild -bb --quiet --target "$(rpm_arch "$t")-linux" \
        --define "_topdir $stage/top" --define "stage $stage/root" --define "srcdir $PWD" \
        --define "pkg_version $version" packaging/rpm/plugtop.spec >"$stage/rpmbuild.log" 2>&1 ||
        { cat "$stage/rpmbuild.log" >&2; fail "rpmbuild failed for $t"; }
    rpm=$(find "$stage/top/RPMS" -name '*.rpm' | head -1)
    cp "$rpm" "$out/"
    rpm=$out/$(basename "$rpm")
    sign_rpm "$rpm"
    echo "$deb ($(du -h "$deb" | cut -f1)), $rpm ($(du -h "$rpm" | cut -f1))"
    debs+=("$deb")
    rpms+=("$rpm")
done

echo "== lintian (errors fail; warnings listed)"
for deb in "${debs[@]}"; do
    said=$(lintian --tag-display-limit 0 "$deb" 2>&1) || true
    grep -v '^N:' <<<"$said" | sed 's/^/  /' || true
    ! grep -q '^E:' <<<"$said" || fail "lintian finds errors in $deb"
done
echo "== rpmlint (errors fail; warnings listed)"
# rpmlint checks the signature against rpm's keys: an rpm database of its
# own that holds the signing key, through a HOME with its .rpmmacros.
lint_home=$PWD/target/package/rpmlint-home
mkdir -p "$lint_home/db"
echo "%_dbpath $lint_home/db" >"$lint_home/.rpmmacros"
rpmkeys --dbpath "$lint_home/db" --import target/package/rpm-key.asc
for rpm in "${rpms[@]}"; do
    said=$(HOME=$lint_home rpmlint "$rpm" 2>&1) || true
    grep -E ': (E|W): |errors,' <<<"$said" | sed 's/^/  /' || true
    ! grep -qE ': E: ' <<<"$said" || fail "rpmlint finds errors in $rpm"
    grep -qE ' 0 errors' <<<"$said" || fail "rpmlint did not finish on $rpm: $said"
done

echo "== contents"
for deb in "${debs[@]}"; do
    listing=$(dpkg-deb -c "$deb" | awk '{print $NF}')
    for want in ./usr/bin/plugtop ./usr/bin/plugtop-run ./usr/share/man/man1/plugtop.1.gz ./usr/share/man/man1/plugtop-run.1.gz \
        ./usr/share/man/man5/plugtop-rules.5.gz ./usr/share/bash-completion/completions/plugtop \
        ./usr/share/zsh/vendor-completions/_plugtop ./usr/share/fish/vendor_completions.d/plugtop.fish \
        ./usr/lib/systemd/system/plugtop.service ./etc/default/plugtop \
        ./usr/share/doc/plugtop/copyright ./usr/share/doc/plugtop/changelog.Debian.gz \
        ./usr/share/doc/plugtop/examples/grafana/plugtop.json \
        ./usr/share/doc/plugtop/examples/rules/recommended-default.conf \
        ./usr/share/doc/plugtop/examples/prometheus/plugtop-alerts.yml ./usr/share/doc/plugtop/metrics.md; do
        grep -qx "$want" <<<"$listing" || fail "$want is missing from $deb"
    done
    info=$(mktemp -d)
    dpkg-deb -e "$deb" "$info"
    grep -q 'deb-systemd-helper\|systemctl' "$info/postinst" || fail "$deb: postinst does not tell systemd"
    grep -q 'daemon-reload' "$info/postrm" || fail "$deb: postrm does not reload systemd"
    grep -q 'stop' "$info/prerm" || fail "$deb: prerm does not stop the service"
    ! grep -qE 'deb-systemd-invoke (start|restart) ' "$info/postinst" || fail "$deb: postinst starts the service"
    grep -qx '/etc/default/plugtop' "$info/conffiles" || fail "$deb: /etc/default/plugtop is no conffile"
    rm -rf "$info"
    copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/plugtop/copyright)
    grep -q '^License: MIT or Apache-2.0' <<<"$copyright" || fail "$deb: copyright names not MIT OR Apache-2.0"
    # The MIT text in it is LICENSE-MIT's, line for line.
    while IFS= read -r line; do
        [ -z "$line" ] || grep -qF " $line" <<<"$copyright" || fail "$deb: copyright lacks LICENSE-MIT's \"$line\""
    done < <(tail -n +5 LICENSE-MIT)
done
for rpm in "${rpms[@]}"; do
    files=$(rpm -qlp "$rpm" 2>/dev/null)
    for want in /usr/bin/plugtop /usr/bin/plugtop-run /usr/share/man/man1/plugtop-run.1.gz /usr/share/man/man5/plugtop-rules.5.gz \
        /usr/lib/systemd/system/plugtop.service /usr/share/zsh/site-functions/_plugtop \
        /etc/sysconfig/plugtop /usr/share/licenses/plugtop/LICENSE-MIT /usr/share/licenses/plugtop/LICENSE-APACHE \
        /usr/share/doc/plugtop/examples/grafana/plugtop.json; do
        grep -qx "$want" <<<"$files" || fail "$want is missing from $rpm"
    done
    scripts=$(rpm -qp --scripts "$rpm" 2>/dev/null)
    grep -q 'daemon-reload' <<<"$scripts" || fail "$rpm: no daemon-reload in its scriptlets"
    grep -q 'disable --now plugtop.service' <<<"$scripts" || fail "$rpm: not stopped and disabled on removal"
    rpm -qp --changelog "$rpm" 2>/dev/null | grep -q . || fail "$rpm has no %changelog"
    [ "$(rpm -qp --qf '%{LICENSE}' "$rpm" 2>/dev/null)" = "MIT OR Apache-2.0" ] || fail "$rpm: wrong licence"
done
echo ok

echo "== the host's .deb installed into a temporary root"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
host_deb=${debs[-1]}
for deb in "${debs[@]}"; do [[ "$deb" == *"_$(dpkg --print-architecture).deb" ]] && host_deb=$deb; done
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info"
touch "$root/var/lib/dpkg/status"
# Its dependencies (libc) are this machine's; the temporary database does
# not know them. The maintainer scripts do not run (no systemd there).
dpkg --root="$root" --force-depends --force-script-chrootless --log=/dev/null --no-triggers \
    --unpack "$host_deb" >/dev/null
"$root/usr/bin/plugtop" --version
MANPATH="$root/usr/share/man" MANWIDTH=80 man plugtop-run | grep -q "EXIT STATUS" || fail "man plugtop-run"
bash -c "source $root/usr/share/bash-completion/completions/plugtop && complete -p plugtop" >/dev/null

echo "== the unit"
# verify: every word it says is a fault (an unknown Type= only warns).
# It looks in the root for the units this one needs and for the programs
# it runs: this machine's units and kill join plugtop's there.
cp -an /usr/lib/systemd/system/. "$root/usr/lib/systemd/system/"
install -D /bin/kill "$root/bin/kill"
said=$(cd "$root" && MANPATH="$root/usr/share/man" systemd-analyze verify --root="$root" \
    "$root/usr/lib/systemd/system/plugtop.service" 2>&1) || fail "systemd-analyze verify: $said"
[ -z "$said" ] || fail "systemd-analyze verify: $said"
security=$(systemd-analyze security --offline=yes --root="$root" --threshold=49 \
    "$root/usr/lib/systemd/system/plugtop.service" 2>&1) ||
    fail "systemd-analyze security: the unit scores 5 or more: $(tail -1 <<<"$security")"
score=$(sed -n 's/.*Overall exposure level for plugtop.service: \([0-9.]*\).*/\1/p' <<<"$security")
[ -n "$score" ] || fail "systemd-analyze security gave no score: $security"
echo "security exposure $score"

if command -v qemu-s390x >/dev/null && [[ " ${targets[*]} " == *" s390x-unknown-linux-gnu "* ]]; then
    echo "== the s390x binary under qemu-s390x"
    bin=target/cross/s390x-unknown-linux-gnu/dist/plugtop
    qemu-s390x -L /usr/s390x-linux-gnu "$bin" --version
    qemu-s390x -L /usr/s390x-linux-gnu "$bin" sim examples/scenarios/appserver.toml --duration 15m --report |
        grep -q "online CPUs, average" || fail "the s390x binary's sim --report"
    echo ok
fi
echo "package: PASS in $((SECONDS - started)) s"
