/// The health data model. Filled in by the store issue; see ARCHITECTURE.md.
public enum Health {}
