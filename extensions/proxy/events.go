package proxy

import "time"

// kind is what happened to a proxy.
type kind uint8

const (
	ejected    kind = iota // out of the rotation until its cooldown has passed
	probing                // its cooldown passed: the rotation gives it a probe
	lostProbe              // its probe was never recorded: handed out again
	restored               // its probe passed: back in the rotation
	clientSide             // its ejection was refused, or every proxy is ejected: the pool pauses
	unheld                 // a proxy kept by the share rule carried a request
)

// event is one change, queued under the Pool's lock and told (logged,
// hooks called) by unlock, once the lock is released.
type event struct {
	kind     kind
	snap     Snapshot
	reason   string
	cooldown time.Duration
	err      error
}

// queue adds ev to the events unlock tells; the caller holds the lock.
func (p *Pool) queue(ev event) { p.queued = append(p.queued, ev) }

// unlock releases the Pool's lock, then logs the events queued under it
// and calls the hooks, in order. Most calls queue none, and allocate
// nothing.
func (p *Pool) unlock() {
	evs := p.queued
	p.queued = nil
	p.mu.Unlock()
	for _, ev := range evs {
		s := ev.snap
		switch ev.kind {
		case ejected:
			p.cfg.Logger.Warn().Str("proxy", s.Name).Str("reason", ev.reason).Int("ejections", s.Ejections).
				Dur("cooldown", ev.cooldown).Time("retry_at", s.RetryAt).Msg("proxy ejected from the rotation")
			if p.cfg.OnEject != nil {
				p.cfg.OnEject(s)
			}
		case probing:
			p.cfg.Logger.Info().Str("proxy", s.Name).Int("ejections", s.Ejections).Msg("proxy cooldown passed: probing it")
		case lostProbe:
			p.cfg.Logger.Warn().Str("proxy", s.Name).Msg("proxy probe never recorded: probing it again")
		case restored:
			p.cfg.Logger.Info().Str("proxy", s.Name).Int("ejections", s.Ejections).Msg("proxy probe passed: back in the rotation")
			if p.cfg.OnRestore != nil {
				p.cfg.OnRestore(s)
			}
		case clientSide:
			p.cfg.Logger.Error().Str("proxy", s.Name).Str("reason", ev.reason).Err(ev.err).Dur("pause", ev.cooldown).
				Msg("proxies failing past the ejection share: the client side is the likely cause; no proxy is handed out for the pause")
			if p.cfg.OnClientSide != nil {
				p.cfg.OnClientSide(ev.err)
			}
		case unheld:
			p.cfg.Logger.Info().Str("proxy", s.Name).Msg("proxy kept by the ejection share carried a request again")
		}
	}
}
