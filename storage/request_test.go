package storage_test

import (
	"testing"

	"github.com/breakwater-crawl/breakwater/storage"
)

// Identify gives the URL as Colly sends it (scheme and host lower-cased,
// the default port dropped) and one ID for every spelling of it; a URL
// Colly's parser refuses gets an error and the ID of the URL as given.
func TestIdentifyIsCollysParseAndHash(t *testing.T) {
	u, id, err := storage.Identify("HTTP://Shop.Test:80/a?b=1", nil)
	if err != nil || u.String() != "http://shop.test/a?b=1" {
		t.Fatalf("Identify = %v, %v", u, err)
	}
	if _, again, _ := storage.Identify(u.String(), nil); again != id {
		t.Errorf("the URL Identify gave has another ID: %016x, %016x", again, id)
	}
	if _, withBody, _ := storage.Identify(u.String(), []byte("q=1")); withBody == id {
		t.Error("a body does not change the ID")
	}
	if _, _, err := storage.Identify("http://[::1", nil); err == nil {
		t.Error("Identify accepted a URL Colly refuses")
	}
	if qu, qid, err := storage.ParseRequest([]byte(`{"URL":"HTTP://Shop.Test:80/a?b=1","Method":"GET"}`)); err != nil || qu != u.String() || qid != id {
		t.Errorf("ParseRequest = %q, %016x, %v; want %q, %016x", qu, qid, err, u, id)
	}
}
