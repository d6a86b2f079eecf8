package front

import (
	"net/http"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/front/mystery"
	"github.com/orderlab/orderlab/lab/scenario"
)

// mysteryRuns are the page's runs as mystery mode (package mystery) runs
// and reads them.
type mysteryRuns struct{ s *Server }

var _ mystery.Runs = mysteryRuns{}

func (m mysteryRuns) Start(w http.ResponseWriter, r *http.Request, sc scenario.Scenario, quick bool, by string, sec mystery.Secret) (api.Run, bool) {
	rs := m.s.launch(w, sc, quick, byWhom(r, by), sec)
	if rs == nil {
		return api.Run{}, false
	}
	return rs.view(), true
}

func (m mysteryRuns) Run(id string) (api.Run, mystery.Secret, bool) {
	rs := m.s.lookup(id)
	if rs == nil {
		return api.Run{}, nil, false
	}
	return rs.view(), rs.secret, true
}

func (m mysteryRuns) Last() (v api.Run, sec mystery.Secret, running, ok bool) {
	m.s.mu.Lock()
	rs, running := m.s.current, m.s.current != nil
	if !running && len(m.s.runs) > 0 {
		rs = m.s.runs[len(m.s.runs)-1]
	}
	m.s.mu.Unlock()
	if rs == nil {
		return api.Run{}, nil, false, false
	}
	return rs.view(), rs.secret, running, true
}

// hidden says whether rs's run is a mystery nobody has answered yet.
func (rs *runState) hidden() bool { return rs.secret != nil && rs.secret.Hidden() }
