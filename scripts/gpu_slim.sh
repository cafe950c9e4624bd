#!/usr/bin/env bash
# The device tool sends the working tree (tracked files and untracked ones git does not ignore) with every call, at
# most 64 MiB with what a call carries; the tracked tree is about 58 MiB, most of it docs/results. For GPU calls:
#
#   bash scripts/gpu_slim.sh on     # docs/results and notebooks/ out of git's index and ignored: nothing deleted,
#                                   # nothing committed; prints the size that would travel
#   bash scripts/gpu_slim.sh off    # the index and .gitignore as they were
#
# Never commit while it is on (the commit would delete those files); `git status` shows them as deleted in the index.
set -euo pipefail
cd "$(dirname "$0")/.."
SLIM=(docs/results notebooks)
case ${1:?on or off} in
on)
  [ -e .git/gpu-slim.gitignore ] && { echo "already on (.git/gpu-slim.gitignore exists)"; exit 1; }
  cp .gitignore .git/gpu-slim.gitignore
  git rm -r -q --cached "${SLIM[@]}"
  grep -v '^!docs/results' .git/gpu-slim.gitignore > .gitignore
  for d in "${SLIM[@]}"; do echo "/$d/" >> .gitignore; done
  git ls-files -co --exclude-standard -z | xargs -0 du -cb | tail -1 | awk '{printf "travels without carry: %.1f MiB\n", $1/2^20}'
  ;;
off)
  [ -e .git/gpu-slim.gitignore ] || { echo "not on"; exit 1; }
  git reset -q -- "${SLIM[@]}"
  mv .git/gpu-slim.gitignore .gitignore
  git status --short | head -5
  ;;
*) echo "on or off"; exit 2 ;;
esac
