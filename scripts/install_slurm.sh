#!/usr/bin/env bash
# Debian's Slurm, munge and MariaDB for the scheduler lab (course_lib.slurmlab, tests/test_slurmlab.py).
# Installs them when one is missing and this runs as root; otherwise says what to run and exits 0
# (the scheduler tests then skip, or fail when COURSE_REQUIRE_SLURM=1, as in CI). Never starts a daemon:
# the packages' init scripts are held off by a policy-rc.d for the install (the lab starts its own daemons).
set -euo pipefail
PKGS="slurmctld slurmd slurmdbd slurm-client munge mariadb-server"
missing=
for bin in slurmctld slurmd slurmdbd sbatch sacct sacctmgr munged mariadbd mariadb-install-db; do
  command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || missing="$missing $bin"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "scheduler lab: missing$missing; install with: sudo apt-get install -y $PKGS (its tests skip until then)"
  exit 0
fi
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && made_policy=1
fi
trap '[ -n "$made_policy" ] && rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends $PKGS >/dev/null 2>&1 || {
  apt-get update -qq && apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
}
echo "scheduler lab: installed $PKGS"
