package testserver

import "testing"

func TestDegradeAnswers503WithEmptyBodyAfterN(t *testing.T) {
	s := start(t, Config{Scenario: Scenario{Mode: Degrade, After: 3}})
	for i := 1; i <= 5; i++ {
		code, _, body := get(t, s.ProductURL(i))
		switch {
		case i <= 3 && code != 200:
			t.Errorf("request %d = %d, want 200", i, code)
		case i > 3 && (code != 503 || len(body) != 0):
			t.Errorf("request %d = %d with %d bytes, want 503 and empty", i, code, len(body))
		}
	}
	if _, seq := s.FailingSince(); seq != 4 {
		t.Errorf("FailingSince seq = %d, want 4", seq)
	}
	if got := s.SentAfterFailing(); got != 2 {
		t.Errorf("SentAfterFailing = %d, want 2", got)
	}
	if got := s.CountMode(Degrade); got != 2 {
		t.Errorf("CountMode(Degrade) = %d, want 2", got)
	}
}
