/// Simulated peripherals, the in-process fake central and FakeBlueZ (the BlueZ/fakes issue). Empty until then.
public enum FakeDevices {}
