package verbs

import (
	"reflect"
	"testing"
)

// structFields reads the fields reflect.VisibleFields does, for every
// verb's request type and for a type that embeds one.
func TestStructFieldsAreVisibleFields(t *testing.T) {
	type embeds struct {
		Spawn
		Extra string `json:"extra"`
	}
	types := []reflect.Type{reflect.TypeOf(embeds{})}
	for _, s := range All() {
		types = append(types, reflect.TypeOf(s.New()).Elem())
	}
	for _, typ := range types {
		if got, want := structFields(typ), reflect.VisibleFields(typ); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: structFields %v, VisibleFields %v", typ, got, want)
		}
	}
}
