package redis

import (
	"embed"
	"strconv"

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

// withPrelude is the script lua/<name>.lua after the queue's prelude.
func withPrelude(name string) *goredis.Script { return after(prelude(false), name) }

func after(prelude, name string) *goredis.Script {
	return goredis.NewScript(prelude + "\n" + lua(name))
}

// prelude is lua/prelude.lua for the run script (join) or one it guards.
func prelude(join bool) string {
	return "local bwJoin = " + strconv.FormatBool(join) + "\n" + lua("prelude")
}

var (
	scriptClaim   = withPrelude("claim")
	scriptRequeue = withPrelude("requeue")
	scriptExtend  = withPrelude("extend")
	scriptDead    = withPrelude("dead")

	scriptCircuitAllow    = after(lua("circuit_prelude"), "circuit_allow")
	scriptCircuitRecord   = after(lua("circuit_prelude"), "circuit_record")
	scriptCircuitHold     = after(lua("circuit_prelude"), "circuit_hold")
	scriptCircuitSnapshot = after(lua("circuit_prelude"), "circuit_snapshot")
	scriptCircuitPause    = after(lua("circuit_prelude"), "circuit_pause")

	scriptCPOpen = after(lua("cp_prelude"), "cp_open")
	scriptCPPut  = after(lua("cp_prelude"), "cp_put")
	scriptCPScan = after(lua("cp_prelude"), "cp_scan")
	scriptCPMeta = after(lua("cp_prelude"), "cp_meta")

	// KEYS[7..9]: the visited set, the cookies and the run marker.
	scriptCollyAdd     = withPrelude("colly_add")
	scriptCollyVisit   = withPrelude("colly_visit")
	scriptCollyDone    = withPrelude("colly_done")
	scriptCollyRelease = withPrelude("colly_release")
	scriptCollyRun     = after(prelude(true), "colly_run")
	// The queue's ack.lua, unchanged, as a function, then the tail.
	scriptCollyAck = goredis.NewScript(prelude(false) + "\nlocal function ack()\n" + lua("ack") + "\nend\n" + lua("colly_ack_tail"))
)
