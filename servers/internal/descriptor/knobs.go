package descriptor

import (
	"flag"
	"fmt"
	"reflect"
	"time"
)

// An API's Settings declare each knob once, as a field with tags:
//
//	TokenTTL time.Duration `flag:"pam-token-ttl" default:"1h" help:"lifetime of PAM bearer tokens"`
//
// flag names the knob's flag of `apistack serve` (and so its APISTACK_*
// variable); default is the value a zero field means (ApplyDefaults) and the
// flag's default; serve is a flag default where the server's own zero means
// something else (the fax simulator's back-to-back steps); help is the
// flag's help. A struct field without a flag tag is walked into. Fields may
// be a time.Duration, an int, a bool or a string.

// RegisterFlags declares a flag on fs for every tagged field of *settings,
// bound to the field and showing its default. It panics on a tag it cannot
// read: a mistake in a Settings declaration, which the first test meets.
func RegisterFlags(fs *flag.FlagSet, settings any) {
	walk(settings, func(f reflect.StructField, v reflect.Value) {
		name := f.Tag.Get("flag")
		if name == "" {
			return
		}
		def := f.Tag.Get("serve")
		if def == "" {
			def = f.Tag.Get("default")
		}
		help := f.Tag.Get("help")
		switch p := v.Addr().Interface().(type) {
		case *time.Duration:
			fs.DurationVar(p, name, parse(def, time.ParseDuration), help)
		case *int:
			fs.IntVar(p, name, parse(def, atoi), help)
		case *bool:
			fs.BoolVar(p, name, def == "true", help)
		case *string:
			fs.StringVar(p, name, def, help)
		default:
			panic(fmt.Sprintf("descriptor: the flag %s is a %s, which RegisterFlags cannot bind", name, f.Type))
		}
	})
}

// ApplyDefaults sets every zero field of *settings that has a default tag
// to its default.
func ApplyDefaults(settings any) {
	walk(settings, func(f reflect.StructField, v reflect.Value) {
		def, ok := f.Tag.Lookup("default")
		if !ok || !v.IsZero() {
			return
		}
		switch p := v.Addr().Interface().(type) {
		case *time.Duration:
			*p = parse(def, time.ParseDuration)
		case *int:
			*p = parse(def, atoi)
		case *bool:
			*p = def == "true"
		case *string:
			*p = def
		default:
			panic(fmt.Sprintf("descriptor: the field %s is a %s, which has no default", f.Name, f.Type))
		}
	})
}

// walk calls fn with every field of the struct settings points to, walking
// into struct fields without a flag tag.
func walk(settings any, fn func(reflect.StructField, reflect.Value)) {
	v := reflect.ValueOf(settings).Elem()
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if !f.IsExported() {
			continue
		}
		if fv.Kind() == reflect.Struct && f.Tag.Get("flag") == "" {
			walk(fv.Addr().Interface(), fn)
			continue
		}
		fn(f, fv)
	}
}

// parse reads a default, panicking on one that does not read: a mistake in
// a Settings declaration.
func parse[T any](s string, read func(string) (T, error)) T {
	var zero T
	if s == "" {
		return zero
	}
	v, err := read(s)
	if err != nil {
		panic(fmt.Sprintf("descriptor: the default %q: %v", s, err))
	}
	return v
}

func atoi(s string) (int, error) {
	var n int
	_, err := fmt.Sscan(s, &n)
	return n, err
}
