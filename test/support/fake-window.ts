// The declared-window check lives in dev/fakes/ beside the fake server core it guards.
export * from '#dev/fakes/fake-window.js';
