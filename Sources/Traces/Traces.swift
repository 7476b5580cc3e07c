/// The trace format, replay and the btsnoop importer (the traces issue). Empty until then.
public enum Traces {}
