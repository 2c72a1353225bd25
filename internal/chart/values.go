package chart

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// errNotNumber marks a cell that holds something other than a number.
var errNotNumber = errors.New("not a number")

// number reads a numeric cell as database/sql hands it over from SQLite:
// int64, float64, or text and blobs holding a number. A NULL is NaN, a gap.
func number(v any) (float64, error) {
	switch v := v.(type) {
	case nil:
		return math.NaN(), nil
	case int64:
		return float64(v), nil
	case int:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case float64:
		return finite(v)
	case float32:
		return finite(float64(v))
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	case string:
		return parse(v)
	case []byte:
		return parse(string(v))
	default:
		return 0, errNotNumber
	}
}

func parse(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, errNotNumber
	}
	return finite(f)
}

// finite refuses infinities: the library would stretch an axis to them.
func finite(f float64) (float64, error) {
	if math.IsInf(f, 0) {
		return 0, errNotNumber
	}
	return f, nil
}

// label renders any cell as short text for an axis, a legend or a table.
func label(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		s = "(null)"
	case string:
		s = v
	case []byte:
		s = string(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
		if len(s) > 12 {
			s = strconv.FormatFloat(v, 'g', 6, 64)
		}
	case time.Time: // the driver parses DATETIME columns
		s = moment(v.UTC())
	default:
		s = fmt.Sprint(v)
	}
	return clip(s, 40)
}

// moment prints a time as briefly as it is precise: a date, or a date and
// a clock time.
func moment(t time.Time) string {
	switch {
	case t.Equal(t.Truncate(24 * time.Hour)):
		return t.Format(time.DateOnly)
	case t.Second() == 0 && t.Nanosecond() == 0:
		return t.Format("2006-01-02 15:04")
	default:
		return t.Format(time.DateTime)
	}
}

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ") // newlines would break a label into lines
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// notNumeric is the error for a y cell that is not a number: it names the
// column, the row and the value so a model can pick another column or cast.
func notNumeric(col string, row int, v any) error {
	return fmt.Errorf("column %q is not numeric: row %d holds %q; y columns must hold numbers (pick another column, or CAST it in the query)",
		col, row+1, clip(label(v), 30))
}
