#!/bin/sh
# The runner image's entrypoint. It starts as root only to hand the command to the user
# hbench, never root: hbench takes the uid and gid that own the folder the command runs
# in (the run's folder, in the mounted workspace), so what the run writes there belongs
# to the workspace's owner, as on GitHub's runners; in a folder of root's it keeps its
# own uid, 1000. It joins the group of the mounted Docker socket, so Harbor reaches the
# daemon. Started with --user, the command runs as that user, unchanged.
set -eu
[ "$(id -u)" = 0 ] || exec "$@"
uid=$(stat -c %u .)
gid=$(stat -c %g .)
if [ "$uid" = 0 ]; then
  uid=$(id -u hbench)
  gid=$(id -g hbench)
fi
[ "$gid" = "$(id -g hbench)" ] || groupmod --non-unique --gid "$gid" hbench
# usermod also gives hbench's home to the new uid.
[ "$uid" = "$(id -u hbench)" ] || usermod --non-unique --uid "$uid" hbench
# Harbor's task cache: the volume at /cache, a fresh one unless the run mounts its own.
mkdir -p /cache/harbor
chown "$uid:$gid" /cache/harbor
groups=$gid
if [ -S /var/run/docker.sock ]; then
  groups="$groups,$(stat -c %g /var/run/docker.sock)"
fi
export HOME=/home/hbench USER=hbench LOGNAME=hbench
exec setpriv --reuid "$uid" --regid "$gid" --groups "$groups" -- "$@"
