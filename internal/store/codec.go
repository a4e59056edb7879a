package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"cloud.google.com/go/datastore"
)

// The shared tier keeps an entity's properties in a form of its own: a
// tag a value and the value's bytes, as the Datastore's own types hold
// them. gob, which would do it with no code, sends each value's types
// with it, and reading them again cost a page three milliseconds of CPU
// for its forty entities.

// Value tags.
const (
	tagNil byte = iota
	tagString
	tagInt
	tagBool
	tagFloat
	tagTime
	tagKey
	tagList
	tagGeo
	tagEntity
	tagBytes
)

// Flags of a property and of a time.
const (
	flagNoIndex byte = 1 << iota
	flagUTC
)

// errCodec is a kept entry this version cannot read.
var errCodec = errors.New("store: a kept entry this version cannot read")

// encodeEntry appends an entry (when it was read, and its properties) to
// b. A value of a type no property holds is an error.
func encodeEntry(b []byte, at int64, props datastore.PropertyList) ([]byte, error) {
	b = binary.AppendVarint(b, at)
	return encodeProps(b, props)
}

func encodeProps(b []byte, props []datastore.Property) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(props)))
	var err error
	for _, p := range props {
		b = appendString(b, p.Name)
		var f byte
		if p.NoIndex {
			f |= flagNoIndex
		}
		b = append(b, f)
		if b, err = encodeValue(b, p.Value); err != nil {
			return nil, fmt.Errorf("property %s: %w", p.Name, err)
		}
	}
	return b, nil
}

func encodeValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, tagNil), nil
	case string:
		return appendString(append(b, tagString), v), nil
	case int64:
		return binary.AppendVarint(append(b, tagInt), v), nil
	case bool:
		if v {
			return append(b, tagBool, 1), nil
		}
		return append(b, tagBool, 0), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat), math.Float64bits(v)), nil
	case time.Time:
		var f byte
		if v.Location() == time.UTC {
			f = flagUTC
		}
		// Seconds and nanoseconds: UnixNano overflows past 1678 to 2262,
		// and the zero time, which properties hold, is the year 1.
		b = binary.AppendVarint(append(b, tagTime, f), v.Unix())
		return binary.AppendUvarint(b, uint64(v.Nanosecond())), nil
	case *datastore.Key:
		return appendKey(append(b, tagKey), v), nil
	case []any:
		b = binary.AppendUvarint(append(b, tagList), uint64(len(v)))
		var err error
		for _, e := range v {
			if b, err = encodeValue(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	case datastore.GeoPoint:
		b = binary.LittleEndian.AppendUint64(append(b, tagGeo), math.Float64bits(v.Lat))
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Lng)), nil
	case *datastore.Entity:
		b = append(b, tagEntity)
		if v == nil {
			return append(b, 0), nil
		}
		b = append(b, 1)
		b = appendKey(b, v.Key)
		return encodeProps(b, v.Properties)
	case []byte:
		b = binary.AppendUvarint(append(b, tagBytes), uint64(len(v)))
		return append(b, v...), nil
	}
	return nil, fmt.Errorf("store: no form for a %T", v)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendKey appends k (nil too) with its parents.
func appendKey(b []byte, k *datastore.Key) []byte {
	if k == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = appendString(b, k.Kind)
	b = binary.AppendVarint(b, k.ID)
	b = appendString(b, k.Name)
	b = appendString(b, k.Namespace)
	return appendKey(b, k.Parent)
}

// decoder reads what encodeEntry wrote; its first error stops it.
type decoder struct {
	b   []byte
	err error
}

// decodeEntry reads an entry.
func decodeEntry(b []byte) (at int64, props datastore.PropertyList, err error) {
	d := &decoder{b: b}
	at = d.varint()
	props = d.props(0)
	if d.err == nil && len(d.b) != 0 {
		d.err = errCodec
	}
	if d.err != nil {
		return 0, nil, d.err
	}
	return at, props, nil
}

// maxDepth bounds how deep entities nest in what is read.
const maxDepth = 20

func (d *decoder) props(depth int) []datastore.Property {
	n := d.count()
	if d.err != nil {
		return nil
	}
	props := make([]datastore.Property, 0, n)
	for range n {
		p := datastore.Property{Name: d.string()}
		p.NoIndex = d.byte()&flagNoIndex != 0
		p.Value = d.value(depth)
		if d.err != nil {
			return nil
		}
		props = append(props, p)
	}
	return props
}

func (d *decoder) value(depth int) any {
	switch d.byte() {
	case tagNil:
		return nil
	case tagString:
		return d.string()
	case tagInt:
		return d.varint()
	case tagBool:
		return d.byte() == 1
	case tagFloat:
		return math.Float64frombits(d.uint64())
	case tagTime:
		f := d.byte()
		sec := d.varint()
		nsec := d.count0(1e9 - 1)
		t := time.Unix(sec, int64(nsec))
		if f&flagUTC != 0 {
			t = t.UTC()
		}
		return t
	case tagKey:
		return d.key(0)
	case tagList:
		n := d.count()
		list := make([]any, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			list = append(list, d.value(depth))
		}
		return list
	case tagGeo:
		return datastore.GeoPoint{Lat: math.Float64frombits(d.uint64()), Lng: math.Float64frombits(d.uint64())}
	case tagEntity:
		if d.byte() == 0 {
			return (*datastore.Entity)(nil)
		}
		if depth >= maxDepth {
			d.err = errCodec
			return nil
		}
		e := &datastore.Entity{Key: d.key(0)}
		e.Properties = d.props(depth + 1)
		return e
	case tagBytes:
		n := d.count()
		if d.err != nil {
			return nil
		}
		v := append([]byte(nil), d.b[:n]...)
		d.b = d.b[n:]
		return v
	}
	d.err = errCodec
	return nil
}

func (d *decoder) key(depth int) *datastore.Key {
	if d.byte() == 0 || d.err != nil {
		return nil
	}
	if depth >= maxDepth {
		d.err = errCodec
		return nil
	}
	k := &datastore.Key{Kind: d.string(), ID: d.varint(), Name: d.string(), Namespace: d.string()}
	k.Parent = d.key(depth + 1)
	return k
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errCodec
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errCodec
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length, which what is left must be able to hold.
func (d *decoder) count() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > uint64(len(d.b)-n) {
		d.err = errCodec
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// count0 reads a number of at most most.
func (d *decoder) count0(most uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > most {
		d.err = errCodec
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = errCodec
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) string() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
