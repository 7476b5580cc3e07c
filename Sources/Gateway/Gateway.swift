/// Sensor sessions, sample building, the store writer and the service lifecycle (the gateway issue).
/// Empty until then.
public enum Gateway {}
