#!/usr/bin/env bash
# orchestrate.sh: run the product crawl and act on its exit code, the way a
# scheduler (cron, a CI job, a workflow engine) should. The actions are
# stubs that only say what a real orchestrator would do; replace them.
#
#   examples/productcrawl/orchestrate.sh --resume [productcrawl flags and URLs]
#
# Pass --resume: the same command line then starts the crawl the first
# time and continues it from its checkpoint (crawl.db) every time it is
# rescheduled; a second process on the same checkpoint is refused.
# A crawl shared through Redis (--redis URL, with the same --crawl-id on
# every machine) needs no --resume: the same command continues it, and
# any number of workers may run it at once.
#
# PRODUCTCRAWL is the command that runs the crawl, split on spaces, e.g.
# the path of an installed productcrawl binary. Without it the script
# builds productcrawl from the source beside it (go build, from any
# directory) into $XDG_CACHE_HOME/breakwater (~/.cache/breakwater) and
# runs that binary. Never go run: it turns every non-zero exit into 1, so
# a trip, an empty run and a typo would all page on-call.
# RUN_ID names the run in the messages. The script exits with the crawl's
# code, so whatever runs it still sees how the run ended.
set -u

run_id=${RUN_ID:-productcrawl-$(date +%Y%m%dT%H%M%S)}

page_oncall() { echo "orchestrate: $run_id error: paging on-call (a bug, a crash or a broken environment), a retry would fail the same way; read the report and the log"; }

if [[ -n ${PRODUCTCRAWL:-} ]]; then
	read -r -a crawl <<<"$PRODUCTCRAWL"
else
	# Built under a name of its own, then renamed over the last build: a
	# crawl still running the old binary keeps it, and two runs building
	# at once never write the same file.
	src=$(dirname "${BASH_SOURCE[0]}")
	bindir=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/breakwater
	if ! { mkdir -p "$bindir" && go build -C "$src" -o "$bindir/productcrawl.$$" . &&
		mv -f "$bindir/productcrawl.$$" "$bindir/productcrawl"; }; then
		rm -f "$bindir/productcrawl.$$"
		echo "orchestrate: $run_id cannot build productcrawl from $src into $bindir (set PRODUCTCRAWL to a built binary)"
		page_oncall
		exit 1
	fi
	crawl=("$bindir/productcrawl")
fi

mark_done()   { echo "orchestrate: $run_id complete: marking the run done"; }
reschedule()  { echo "orchestrate: $run_id tripped: a target degraded; rescheduling in 30m from the checkpoint, no human needed"; }
alert_empty() { echo "orchestrate: $run_id empty: alerting, the run finished clean but collected nothing"; }
fix_config()  { echo "orchestrate: $run_id usage: bad flags or configuration, nothing was sent; fix the job definition"; }

"${crawl[@]}" "$@"
code=$?

case $code in
0) mark_done ;;
2) reschedule ;;
1) page_oncall ;;
3) alert_empty ;;
64) fix_config ;;
*) echo "orchestrate: $run_id exited $code, which productcrawl never returns (killed?): paging on-call" ;;
esac
exit "$code"
