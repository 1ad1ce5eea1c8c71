package redis

import (
	"embed"

	goredis "github.com/redis/go-redis/v9"
)

// The Lua scripts, one file each under lua/, with a prelude prepended to
// each: lua/prelude.lua (the queue's key and argument layout, and the
// helpers), lua/circuit_prelude.lua (a BreakerStore's layout, load, save
// and the moves) or lua/cp_prelude.lua (the checkpoint's key layout and
// record header). Every script runs atomically on the Redis that holds the
// crawl's slot and is sent as EVALSHA: one round trip per call once Redis
// has cached it (the first call after a Redis restart falls back to EVAL).
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
func withPrelude(name string) *goredis.Script {
	return goredis.NewScript(prelude(false) + "\n" + lua(name))
}

// prelude is lua/prelude.lua for a script that may write the run marker
// (join: the run script) or that the marker guards (every other one).
func prelude(join bool) string {
	if join {
		return "local bwJoin = true\n" + lua("prelude")
	}
	return "local bwJoin = false\n" + lua("prelude")
}

func withCircuitPrelude(name string) *goredis.Script {
	return goredis.NewScript(lua("circuit_prelude") + "\n" + lua(name))
}

func withCPPrelude(name string) *goredis.Script {
	return goredis.NewScript(lua("cp_prelude") + "\n" + lua(name))
}

var (
	scriptClaim   = withPrelude("claim")
	scriptRequeue = withPrelude("requeue")
	scriptExtend  = withPrelude("extend")
	scriptDead    = withPrelude("dead")

	scriptCircuitAllow    = withCircuitPrelude("circuit_allow")
	scriptCircuitRecord   = withCircuitPrelude("circuit_record")
	scriptCircuitHold     = withCircuitPrelude("circuit_hold")
	scriptCircuitSnapshot = withCircuitPrelude("circuit_snapshot")
	scriptCircuitPause    = withCircuitPrelude("circuit_pause")

	scriptCPOpen = withCPPrelude("cp_open")
	scriptCPPut  = withCPPrelude("cp_put")
	scriptCPScan = withCPPrelude("cp_scan")
	scriptCPMeta = withCPPrelude("cp_meta")

	// The CollyStorage scripts: the queue's prelude with three more keys
	// (the visited set, the cookies and the run marker, KEYS[7] to KEYS[9]).
	scriptCollyAdd     = withPrelude("colly_add")
	scriptCollyVisit   = withPrelude("colly_visit")
	scriptCollyDone    = withPrelude("colly_done")
	scriptCollyRelease = withPrelude("colly_release")
	scriptCollyRun     = goredis.NewScript(prelude(true) + "\n" + lua("colly_run"))
	// The queue's ack.lua, unchanged, as a function, then the tail.
	scriptCollyAck = goredis.NewScript(prelude(false) + "\nlocal function ack()\n" + lua("ack") + "\nend\n" + lua("colly_ack_tail"))
)
