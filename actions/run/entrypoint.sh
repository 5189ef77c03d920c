#!/bin/sh
# The runner image's entrypoint. The command runs as the owner of the folder it runs in
# (the run's folder, in the mounted workspace), so what the run writes there belongs to
# the workspace's owner: the user hbench, renumbered to that owner's uid and gid (on
# GitHub's hosted runners, 1001), who joins the group of the mounted Docker socket so
# Harbor reaches the daemon. The image's own folders are hbench's (uid 1000). Only a
# folder of root's, on a runner that runs as root, keeps root, since only root could
# write there. Started with --user, the command runs as that user, unchanged.
set -eu
[ "$(id -u)" = 0 ] || exec "$@"
uid=$(stat -c %u .)
gid=$(stat -c %g .)
if [ "$uid" = 0 ]; then
  mkdir -p /cache/harbor
  exec "$@"
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
