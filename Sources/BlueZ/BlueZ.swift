/// The sd-bus wrapper and the org.bluez client (the BlueZ/fakes issue). Empty until then: the target exists so
/// that the dependency order (GATT <- BlueZ <- FakeDevices, Gateway) is fixed from the start.
public enum BlueZ {}
