package redis

import (
	"embed"

	goredis "github.com/redis/go-redis/v9"
)

// The Lua scripts, one file each under lua/, each after a prelude
// (prelude.lua for the queue, circuit_ or cp_prelude.lua), sent as EVALSHA.
//
//go:embed lua
var luaFiles embed.FS

// lua is the text of lua/<name>.lua.
func lua(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err) // a file missing from the package
	}
	return string(b)
}

// after is the script lua/<name>.lua after prelude.
func after(prelude, name string) *goredis.Script {
	return goredis.NewScript(prelude + "\n" + lua(name))
}

// The queue's prelude for the scripts the run marker guards, and for the
// run script, which joins the run.
var guarded, joining = "local bwJoin = false\n" + lua("prelude"), "local bwJoin = true\n" + lua("prelude")

var (
	scriptClaim   = after(guarded, "claim")
	scriptRequeue = after(guarded, "requeue")
	scriptExtend  = after(guarded, "extend")
	scriptDead    = after(guarded, "dead")

	scriptCircuitAllow    = after(lua("circuit_prelude"), "circuit_allow")
	scriptCircuitRecord   = after(lua("circuit_prelude"), "circuit_record")
	scriptCircuitHold     = after(lua("circuit_prelude"), "circuit_hold")
	scriptCircuitSnapshot = after(lua("circuit_prelude"), "circuit_snapshot")
	scriptCircuitPause    = after(lua("circuit_prelude"), "circuit_pause")

	scriptCPOpen = after(lua("cp_prelude"), "cp_open")
	scriptCPScan = after(lua("cp_prelude"), "cp_scan")
	scriptCPMeta = after(lua("cp_prelude"), "cp_meta")
	scriptCPOut  = after(lua("cp_prelude"), "cp_output")

	// KEYS[7..9]: the visited set, the cookies and the run marker.
	scriptCollyAdd     = after(guarded, "colly_add")
	scriptCollyVisit   = after(guarded, "colly_visit")
	scriptCollyDone    = after(guarded, "colly_done")
	scriptCollyRelease = after(guarded, "colly_release")
	scriptCollyRun     = after(joining, "colly_run")
	// The queue's ack.lua, unchanged, as a function, then the tail.
	scriptCollyAck = goredis.NewScript(guarded + "\nlocal function ack()\n" + lua("ack") + "\nend\n" + lua("colly_ack_tail"))
)
