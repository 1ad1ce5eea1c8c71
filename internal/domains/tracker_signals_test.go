package domains

import (
	"reflect"
	"testing"
)

// TestSignalsAnySeesEveryField checks Any against the struct comparison
// it stands for, one field set at a time, so a field added later and
// not to Any fails here.
func TestSignalsAnySeesEveryField(t *testing.T) {
	if (trackerSignals{}).Any() {
		t.Fatal("the zero trackerSignals reports a signal")
	}
	typ := reflect.TypeFor[trackerSignals]()
	for i := range typ.NumField() {
		var s trackerSignals
		f := reflect.ValueOf(&s).Elem().Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Float64:
			f.SetFloat(0.5)
		case reflect.Int, reflect.Int64:
			f.SetInt(1)
		default:
			t.Fatalf("field %s: kind %s not covered by this test", typ.Field(i).Name, f.Kind())
		}
		if s == (trackerSignals{}) || !s.Any() {
			t.Errorf("only %s set: Any() = %v", typ.Field(i).Name, s.Any())
		}
	}
}
