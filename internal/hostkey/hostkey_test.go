package hostkey

import "testing"

func TestOf(t *testing.T) {
	for in, want := range map[string]string{
		"Shop.Test:8080": "shop.test:8080",
		"shop.test":      "shop.test",
		"":               "",
	} {
		if got := Of(in); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
}
