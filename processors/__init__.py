"""The application service and the stream processors that react to messages, events and time."""
