package locale_test

import (
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/locale"
)

var placeholder = regexp.MustCompile(`\{[a-zA-Z]+\}`)

func TestCatalogsMatch(t *testing.T) {
	t.Parallel()
	en, de := locale.Keys(locale.English), locale.Keys(locale.German)
	sort.Strings(en)
	sort.Strings(de)
	require.Equal(t, en, de, "both catalogs have the same keys")
	for _, k := range en {
		e, _ := locale.Raw(locale.English, k)
		d, _ := locale.Raw(locale.German, k)
		pe, pd := placeholder.FindAllString(e, -1), placeholder.FindAllString(d, -1)
		sort.Strings(pe)
		sort.Strings(pd)
		require.Equal(t, pe, pd, "placeholders of %s", k)
		require.NotEmpty(t, d, k)
	}
}

func TestPick(t *testing.T) {
	t.Parallel()
	de := "de"
	require.Equal(t, "de", locale.Pick(&de, "en"))
	require.Equal(t, "de", locale.Pick(nil, "fr-FR, de;q=0.8, en;q=0.5"))
	require.Equal(t, "en", locale.Pick(nil, "de;q=0.3, en;q=0.9"))
	require.Equal(t, "en", locale.Pick(nil, "fr"))
	require.Equal(t, "en", locale.Pick(nil, ""))
	require.Equal(t, "Zu viele Anfragen. Bitte in 5 Sekunden erneut versuchen.", locale.T("de", "error.RATE_LIMITED", "seconds", "5"))
	require.Equal(t, "no.such.key", locale.T("de", "no.such.key"))
}
