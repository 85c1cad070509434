#!/usr/bin/env bash
# Builds the image's base, a Debian bookworm root filesystem with the distribution's Java 17 runtime and the
# scrouter user (uid/gid 10001), as a `docker save` tarball that Jib reads with `tar://` (extproc's `image`
# profile). Everything comes from Debian's packages through this machine's own apt sources: no container
# registry is needed. Needs root and mmdebstrap (`apt-get install mmdebstrap`); takes about two minutes.
#
#   build-base-image.sh OUTPUT.tar
#
# The tarball is reused when it exists: delete it to pick up Debian's security updates.
set -euo pipefail

out=${1:?usage: build-base-image.sh OUTPUT.tar}
if [ -s "$out" ]; then
  echo "base image $out exists; delete it to rebuild"
  exit 0
fi
if ! command -v mmdebstrap >/dev/null; then
  echo "mmdebstrap not found: apt-get install -y mmdebstrap (Debian package), then run again" >&2
  exit 1
fi
sources=""
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  if [ -s "$f" ]; then sources=$f; break; fi
done
if [ -z "$sources" ]; then
  echo "no Debian apt sources found on this machine (/etc/apt/sources.list.d/debian.sources)" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$(dirname "$out")"

# Manual pages, documentation and translations are left out; update-alternatives still needs man1 to exist.
mmdebstrap --mode=root --variant=apt --include=openjdk-17-jre-headless,ca-certificates \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --setup-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook='chroot "$1" groupadd --system --gid 10001 scrouter' \
  --customize-hook='chroot "$1" useradd --system --uid 10001 --gid scrouter --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin scrouter' \
  --customize-hook='rm -rf "$1/var/lib/apt/lists"/* "$1/var/cache/apt"/*' \
  bookworm "$work/layer.tar" "$sources"

layer_sha=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
java_home=/usr/lib/jvm/java-17-openjdk-amd64
cat > "$work/config.json" <<JSON
{"architecture":"amd64","os":"linux",
 "config":{"Env":["PATH=$java_home/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","JAVA_HOME=$java_home","LANG=C.UTF-8"]},
 "rootfs":{"type":"layers","diff_ids":["sha256:$layer_sha"]},
 "history":[{"created_by":"extproc/src/image/build-base-image.sh: Debian bookworm, openjdk-17-jre-headless"}]}
JSON
cat > "$work/manifest.json" <<JSON
[{"Config":"config.json","RepoTags":["scrouter/base:bookworm-jre17"],"Layers":["layer.tar"]}]
JSON
tar -C "$work" -cf "$out.partial" manifest.json config.json layer.tar
mv "$out.partial" "$out"
echo "base image written to $out ($(du -h "$out" | cut -f1))"
