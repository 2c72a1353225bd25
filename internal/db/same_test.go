package db

import (
	"fmt"
	"reflect"
	"testing"

	"tavern/internal/engine"
)

// TestSameSeesEveryField: each row comparison of writeRows tells a row from
// one that differs in any single field, and a nil slice or map from an
// empty one, so a field added to an engine type that the comparison
// misses fails here instead of going unwritten.
func TestSameSeesEveryField(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		same func(a, b any) bool
	}{
		{reflect.TypeFor[engine.Character](), func(a, b any) bool { return sameCharacter(a.(*engine.Character), b.(*engine.Character)) }},
		{reflect.TypeFor[engine.Location](), func(a, b any) bool { return sameLocation(a.(*engine.Location), b.(*engine.Location)) }},
		{reflect.TypeFor[engine.NPC](), func(a, b any) bool { return sameNPC(a.(*engine.NPC), b.(*engine.NPC)) }},
		{reflect.TypeFor[engine.Item](), func(a, b any) bool { return sameItem(a.(*engine.Item), b.(*engine.Item)) }},
		{reflect.TypeFor[engine.ItemTemplate](), func(a, b any) bool {
			return sameValue(a.(*engine.ItemTemplate), b.(*engine.ItemTemplate))
		}},
		{reflect.TypeFor[engine.Quest](), func(a, b any) bool { return sameValue(a.(*engine.Quest), b.(*engine.Quest)) }},
	} {
		t.Run(c.typ.Name(), func(t *testing.T) {
			filled := func() reflect.Value {
				v := reflect.New(c.typ)
				fill(v.Elem(), 1)
				return v
			}
			base := filled()
			if !c.same(base.Interface(), filled().Interface()) {
				t.Fatalf("two equal rows differ")
			}
			for i := range c.typ.NumField() {
				f := c.typ.Field(i)
				other := filled()
				fill(other.Elem().Field(i), 2)
				if c.same(base.Interface(), other.Interface()) {
					t.Errorf("a change of %s goes unseen", f.Name)
				}
				if k := f.Type.Kind(); k == reflect.Slice || k == reflect.Map {
					empty, null := filled(), filled()
					if k == reflect.Slice {
						empty.Elem().Field(i).Set(reflect.MakeSlice(f.Type, 0, 0))
					} else {
						empty.Elem().Field(i).Set(reflect.MakeMap(f.Type))
					}
					null.Elem().Field(i).SetZero()
					if c.same(empty.Interface(), null.Interface()) {
						t.Errorf("an empty %s and a nil one are the same", f.Name)
					}
				}
			}
		})
	}
}

// fill sets every field of v, recursively, to a value made from n: two
// fills with different n differ in every field.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprint("v", n))
	case reflect.Int:
		v.SetInt(int64(n))
	case reflect.Bool:
		v.SetBool(n%2 == 1)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, 1)
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	default:
		panic("fill: no case for " + v.Type().String())
	}
}
