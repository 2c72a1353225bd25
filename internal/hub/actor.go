package hub

import "context"

type actorKey struct{}

// WithActor returns ctx naming who acts on the operator's side (a console
// user's name, or "root"): the moderation events and log lines say so
// (PROTOCOL.md "Operator, continued").
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// ActorFrom returns the name WithActor put in ctx, or "".
func ActorFrom(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}
