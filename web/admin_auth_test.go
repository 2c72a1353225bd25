package web_test

import (
	"net/http"
	"strings"
	"testing"

	"tavern/web"
)

// noRedirect returns a client of e that does not follow redirects.
func (e *testEnv) noRedirect() *http.Client {
	c := *e.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

func TestAdminAuth(t *testing.T) {
	e := newTestEnv(t)
	_, playerTok := e.newPlayer("Ann")

	t.Run("API without the admin token is 401", func(t *testing.T) {
		for name, tok := range map[string]string{"no token": "", "wrong token": "nope", "player token": playerTok} {
			r := e.do("GET", "/metrics", nil, tok)
			wantError(t, r, http.StatusUnauthorized, "unauthorized")
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: no WWW-Authenticate header", name)
			}
		}
	})
	t.Run("API with the admin token", func(t *testing.T) {
		if r := e.do("GET", "/metrics", nil, testAdminToken); r.status != 200 || !strings.Contains(string(r.body), "tavern_http_requests_total") {
			t.Errorf("/metrics with the admin token = %d %.200s", r.status, r.body)
		}
	})
	t.Run("pages without the token show the sign-in form", func(t *testing.T) {
		for name, hdr := range map[string][]string{
			"no token":      nil,
			"wrong cookie":  {"Cookie", web.AdminCookie + "=nope"},
			"player cookie": {"Cookie", web.CookieName + "=" + playerTok},
			"player bearer": {"Authorization", "Bearer " + playerTok},
		} {
			r := e.do("GET", "/admin", nil, "", hdr...)
			if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), `action="/admin/login"`) {
				t.Errorf("%s: GET /admin = %d, want 401 with the sign-in form\n%.300s", name, r.status, r.body)
			}
			if strings.Contains(string(r.body), `class="admin-nav"`) {
				t.Errorf("%s: the sign-in page shows the admin nav", name)
			}
		}
	})
	t.Run("token exchanged for the cookie", func(t *testing.T) {
		res, err := e.noRedirect().Get(e.url + "/admin?token=" + testAdminToken)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin" {
			t.Fatalf("GET /admin?token= = %d Location %q, want 303 to /admin", res.StatusCode, res.Header.Get("Location"))
		}
		var c *http.Cookie
		for _, k := range res.Cookies() {
			if k.Name == web.AdminCookie {
				c = k
			}
		}
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
			t.Fatalf("admin cookie = %+v, want HttpOnly SameSite=Strict Path=/", c)
		}
		r := e.do("GET", "/admin", nil, "", "Cookie", web.AdminCookie+"="+c.Value)
		if r.status != 200 || !strings.Contains(string(r.body), `class="admin-nav"`) || !strings.Contains(string(r.body), `href="/admin/llm"`) {
			t.Errorf("GET /admin with the cookie = %d\n%.400s", r.status, r.body)
		}
		if r := e.do("GET", "/metrics", nil, "", "Cookie", web.AdminCookie+"="+c.Value); r.status != 200 {
			t.Errorf("/metrics with the cookie = %d", r.status)
		}
	})
	t.Run("wrong token in the URL", func(t *testing.T) {
		res, err := e.noRedirect().Get(e.url + "/admin?token=nope")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
			t.Errorf("GET /admin?token=nope = %d cookies %v, want 401 and no cookie", res.StatusCode, res.Cookies())
		}
	})
	t.Run("sign-in form", func(t *testing.T) {
		post := func(token, next string) *http.Response {
			req, _ := http.NewRequest("POST", e.url+"/admin/login", strings.NewReader("token="+token+"&next="+next))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := e.noRedirect().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		if res := post("nope", "/admin/tables"); res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
			t.Errorf("wrong token: %d %v", res.StatusCode, res.Cookies())
		}
		if res := post(testAdminToken, "/admin/tables"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin/tables" || len(res.Cookies()) != 1 {
			t.Errorf("right token: %d %q %v", res.StatusCode, res.Header.Get("Location"), res.Cookies())
		}
		// No open redirect.
		for _, next := range []string{"https://evil.example/", "//evil.example/admin", "/tables/x"} {
			if res := post(testAdminToken, next); res.Header.Get("Location") != "/admin" {
				t.Errorf("next %q redirected to %q, want /admin", next, res.Header.Get("Location"))
			}
		}
	})
}

// Wrong admin tokens are throttled per address: after the burst, a wrong
// token from that address is answered 429 with the JSON error body. The
// right token still passes: a guesser behind the operator's NAT does not
// lock the operator out.
func TestAdminTokenThrottled(t *testing.T) {
	e := newTestEnv(t)
	if r := e.do("GET", "/admin", nil, ""); r.status != http.StatusUnauthorized {
		t.Fatalf("GET /admin without a token = %d, want 401", r.status)
	}
	for i := range web.AdminTryBurst {
		if r := e.do("GET", "/metrics", nil, "guess"); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d = %d, want 401 within the burst", i+1, r.status)
		}
	}
	for name, r := range map[string]response{
		"wrong bearer": e.do("GET", "/metrics", nil, "guess"),
		"wrong cookie": e.do("GET", "/admin", nil, "", "Cookie", web.AdminCookie+"=guess"),
	} {
		wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", name)
		}
	}
	for range 3 {
		if r := e.do("GET", "/metrics", nil, testAdminToken); r.status != http.StatusOK {
			t.Errorf("right token once throttled = %d, want 200", r.status)
		}
	}
	if r := e.do("GET", "/metrics", nil, "guess"); r.status != http.StatusTooManyRequests {
		t.Errorf("wrong token after right ones = %d, want 429 still (a right token refunds nothing)", r.status)
	}
	// A request without a token is no guess: the sign-in form still shows.
	if r := e.do("GET", "/admin", nil, ""); r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), `action="/admin/login"`) {
		t.Errorf("GET /admin without a token once throttled = %d, want the sign-in form", r.status)
	}
}
