package redis

import (
	_ "embed"

	goredis "github.com/redis/go-redis/v9"
)

// The Lua scripts, one file each under lua/, with lua/prelude.lua (the key
// and argument layout, and the helpers) prepended to each. Every script
// runs atomically on the Redis that holds the crawl's slot and is sent as
// EVALSHA: one round trip per call once Redis has cached it (the first call
// after a Redis restart falls back to EVAL).
var (
	//go:embed lua/prelude.lua
	luaPrelude string
	//go:embed lua/enqueue.lua
	luaEnqueue string
	//go:embed lua/claim.lua
	luaClaim string
	//go:embed lua/ack.lua
	luaAck string
	//go:embed lua/requeue.lua
	luaRequeue string
	//go:embed lua/extend.lua
	luaExtend string
	//go:embed lua/reclaim.lua
	luaReclaim string
	//go:embed lua/dead.lua
	luaDead string
	//go:embed lua/retrydead.lua
	luaRetryDead string
)

var (
	scriptEnqueue   = withPrelude(luaEnqueue)
	scriptClaim     = withPrelude(luaClaim)
	scriptAck       = withPrelude(luaAck)
	scriptRequeue   = withPrelude(luaRequeue)
	scriptExtend    = withPrelude(luaExtend)
	scriptReclaim   = withPrelude(luaReclaim)
	scriptDead      = withPrelude(luaDead)
	scriptRetryDead = withPrelude(luaRetryDead)
)

func withPrelude(body string) *goredis.Script {
	return goredis.NewScript(prelude(false) + "\n" + body)
}

// prelude is lua/prelude.lua for a script that may write the run marker
// (join: the run script) or that the marker guards (every other one).
func prelude(join bool) string {
	if join {
		return "local bwJoin = true\n" + luaPrelude
	}
	return "local bwJoin = false\n" + luaPrelude
}

// The circuit scripts of a BreakerStore, with lua/circuit_prelude.lua (the
// key and argument layout, load, save and the moves) prepended to each.
var (
	//go:embed lua/circuit_prelude.lua
	luaCircuitPrelude string
	//go:embed lua/circuit_allow.lua
	luaCircuitAllow string
	//go:embed lua/circuit_record.lua
	luaCircuitRecord string
	//go:embed lua/circuit_hold.lua
	luaCircuitHold string
	//go:embed lua/circuit_snapshot.lua
	luaCircuitSnapshot string
	//go:embed lua/circuit_pause.lua
	luaCircuitPause string
)

var (
	scriptCircuitAllow    = withCircuitPrelude(luaCircuitAllow)
	scriptCircuitRecord   = withCircuitPrelude(luaCircuitRecord)
	scriptCircuitHold     = withCircuitPrelude(luaCircuitHold)
	scriptCircuitSnapshot = withCircuitPrelude(luaCircuitSnapshot)
	scriptCircuitPause    = withCircuitPrelude(luaCircuitPause)
)

func withCircuitPrelude(body string) *goredis.Script {
	return goredis.NewScript(luaCircuitPrelude + "\n" + body)
}

// The checkpoint scripts, with lua/cp_prelude.lua (the key layout and the
// record header) prepended to each.
var (
	//go:embed lua/cp_prelude.lua
	luaCPPrelude string
	//go:embed lua/cp_open.lua
	luaCPOpen string
	//go:embed lua/cp_put.lua
	luaCPPut string
	//go:embed lua/cp_scan.lua
	luaCPScan string
	//go:embed lua/cp_meta.lua
	luaCPMeta string
)

var (
	scriptCPOpen = withCPPrelude(luaCPOpen)
	scriptCPPut  = withCPPrelude(luaCPPut)
	scriptCPScan = withCPPrelude(luaCPScan)
	scriptCPMeta = withCPPrelude(luaCPMeta)
)

func withCPPrelude(body string) *goredis.Script {
	return goredis.NewScript(luaCPPrelude + "\n" + body)
}

// The CollyStorage scripts: the queue's prelude with three more keys (the
// visited set, the cookies and the run marker, KEYS[7] to KEYS[9]).
var (
	//go:embed lua/colly_add.lua
	luaCollyAdd string
	//go:embed lua/colly_visit.lua
	luaCollyVisit string
	//go:embed lua/colly_done.lua
	luaCollyDone string
	//go:embed lua/colly_release.lua
	luaCollyRelease string
	//go:embed lua/colly_ack_tail.lua
	luaCollyAckTail string
	//go:embed lua/colly_run.lua
	luaCollyRun string
)

var (
	scriptCollyAdd     = withPrelude(luaCollyAdd)
	scriptCollyVisit   = withPrelude(luaCollyVisit)
	scriptCollyDone    = withPrelude(luaCollyDone)
	scriptCollyRelease = withPrelude(luaCollyRelease)
	scriptCollyRun     = goredis.NewScript(prelude(true) + "\n" + luaCollyRun)
	// The queue's ack.lua, unchanged, as a function, then the tail.
	scriptCollyAck = goredis.NewScript(prelude(false) + "\nlocal function ack()\n" + luaAck + "\nend\n" + luaCollyAckTail)
)
