package agent

import "tavern/internal/jsonstr"

// AppendJSON appends m as json.Marshal writes it: the body of a stored
// history row. A table encodes every message of every turn for its commit,
// and reflection made that the table goroutine's largest encoding cost
// after the events (issue 12). TestMessageJSON compares the two on every
// field, so a field added to Message or ToolCall and not here fails it.
func (m *Message) AppendJSON(b []byte) []byte {
	b = append(b, `{"role":`...)
	b = jsonstr.Append(b, m.Role)
	b = appendField(b, "content", m.Content)
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = m.ToolCalls[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = appendField(b, "tool_call_id", m.ToolCallID)
	}
	return append(b, '}')
}

func (c *ToolCall) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, c.ID)
	b = appendField(b, "type", c.Type)
	b = append(b, `,"function":{"name":`...)
	b = jsonstr.Append(b, c.Function.Name)
	b = appendField(b, "arguments", c.Function.Arguments)
	return append(b, "}}"...)
}
