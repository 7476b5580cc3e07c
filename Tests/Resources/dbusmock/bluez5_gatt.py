'''python-dbusmock's bluez5 template plus a Heart Rate GATT server (wearhouse's cross-check fake)

Load it with `python3 -m dbusmock --template <this file>`. Everything of the bluez5 template stays as it is
(its type bugs included: ManufacturerData aa{qv}, ServiceData aa{sv}, AdvertisingFlags aay, AdvertisingData
aa{yv}); on top of it, on the org.bluez.Mock interface of `/`:

* AddHeartRateService(o device) -> ao: the device becomes a heart-rate strap. Its Connect now does what
  bluetoothd 5.66 does for an LE device: sets Connected (in the properties too, which bluez5's Connect forgets),
  replies, then exports the GATT objects with BlueZ's paths (InterfacesAdded each), adds the Heart Rate service
  to UUIDs and sets ServicesResolved. Disconnect clears ServicesResolved, then Connected. Returns the paths of
  the service, the measurement (2A37, notify), its CCC descriptor and the body sensor location (2A38, read).
* Advertise(o device, as uuids, n rssi): an advertisement of a known device (PropertiesChanged UUIDs, RSSI).
* EmitNotification(o characteristic, ay value): one notification, PropertiesChanged(Value) as bluetoothd sends
  it; fails with org.bluez.Mock.NotNotifying unless somebody called StartNotify.

Characteristics implement ReadValue (emits PropertiesChanged(Value) like bluetoothd, docs/bluez.md F5; NotPermitted
without the read flag), StartNotify (idempotent) and StopNotify ("No notify session started" when not notifying).
'''

import dbus
from gi.repository import GLib

from dbusmock import OBJECT_MANAGER_IFACE, mockobject
from dbusmock.templates import bluez5

# AddTemplate exports every D-Bus method it finds in this module: re-export those of bluez5 (AddAdapter, AddDevice,
# the agent manager, ...) and its module constants (BUS_NAME, SYSTEM_BUS, IS_OBJECT_MANAGER, ...).
from dbusmock.templates.bluez5 import *  # noqa: F401,F403 pylint: disable=wildcard-import,unused-wildcard-import

DEVICE_IFACE = bluez5.DEVICE_IFACE
MOCK_IFACE = bluez5.BLUEZ_MOCK_IFACE
SERVICE_IFACE = 'org.bluez.GattService1'
CHARACTERISTIC_IFACE = 'org.bluez.GattCharacteristic1'
DESCRIPTOR_IFACE = 'org.bluez.GattDescriptor1'


def _uuid(short):
    return f'0000{short:04x}-0000-1000-8000-00805f9b34fb'


def _bytes(values):
    return dbus.Array([dbus.Byte(v) for v in values], signature='y', variant_level=1)


def _error(name, message):
    return dbus.exceptions.DBusException(message, name=name)


def load(mock, parameters):
    bluez5.load(mock, parameters)


# Characteristic methods (bound to each characteristic object).

def _read_value(characteristic, _options):
    properties = characteristic.props[CHARACTERISTIC_IFACE]
    if 'read' not in properties['Flags']:
        raise _error('org.bluez.Error.NotPermitted', 'Read not permitted')
    value = _bytes(properties['Value'])
    # bluetoothd updates Value on every read too (docs/bluez.md, F5).
    characteristic.UpdateProperties(CHARACTERISTIC_IFACE, {'Value': value})
    return dbus.Array(list(value), signature='y')


def _start_notify(characteristic):
    properties = characteristic.props[CHARACTERISTIC_IFACE]
    if not {'notify', 'indicate'} & set(properties['Flags']):
        raise _error('org.bluez.Error.NotSupported', 'Operation is not supported')
    if not properties['Notifying']:
        characteristic.UpdateProperties(CHARACTERISTIC_IFACE, {'Notifying': dbus.Boolean(True)})


def _stop_notify(characteristic):
    if not characteristic.props[CHARACTERISTIC_IFACE].get('Notifying', False):
        raise _error('org.bluez.Error.Failed', 'No notify session started')
    characteristic.UpdateProperties(CHARACTERISTIC_IFACE, {'Notifying': dbus.Boolean(False)})


CHARACTERISTIC_METHODS = [
    ('ReadValue', 'a{sv}', 'ay', _read_value),
    ('WriteValue', 'aya{sv}', '', "raise dbus.exceptions.DBusException('Write not permitted', "
                                  "name='org.bluez.Error.NotPermitted')"),
    ('StartNotify', '', '', _start_notify),
    ('StopNotify', '', '', _stop_notify),
]


# The layout (BlueZ names objects after the ATT declaration handles).

def _layout(device_path):
    service = device_path + '/service0010'
    measurement = service + '/char0011'
    return [
        (service, SERVICE_IFACE, {
            'UUID': dbus.String(_uuid(0x180D), variant_level=1),
            'Device': dbus.ObjectPath(device_path, variant_level=1),
            'Primary': dbus.Boolean(True, variant_level=1),
            'Includes': dbus.Array([], signature='o', variant_level=1),
        }, []),
        (measurement, CHARACTERISTIC_IFACE, {
            'UUID': dbus.String(_uuid(0x2A37), variant_level=1),
            'Service': dbus.ObjectPath(service, variant_level=1),
            'Value': _bytes([]),
            'Notifying': dbus.Boolean(False, variant_level=1),
            'Flags': dbus.Array(['notify'], signature='s', variant_level=1),
            'NotifyAcquired': dbus.Boolean(False, variant_level=1),
            'MTU': dbus.UInt16(23, variant_level=1),
        }, CHARACTERISTIC_METHODS),
        (measurement + '/desc0013', DESCRIPTOR_IFACE, {
            'UUID': dbus.String(_uuid(0x2902), variant_level=1),
            'Characteristic': dbus.ObjectPath(measurement, variant_level=1),
            'Value': _bytes([]),
        }, [('ReadValue', 'a{sv}', 'ay', 'ret = dbus.Array([0, 0], signature="y")')]),
        (service + '/char0014', CHARACTERISTIC_IFACE, {
            'UUID': dbus.String(_uuid(0x2A38), variant_level=1),
            'Service': dbus.ObjectPath(service, variant_level=1),
            'Value': _bytes([0x01]),  # chest
            'Flags': dbus.Array(['read'], signature='s', variant_level=1),
            'MTU': dbus.UInt16(23, variant_level=1),
        }, CHARACTERISTIC_METHODS),
    ]


# Device methods replacing bluez5's for heart-rate devices.

def _connect(device):
    if device.props[DEVICE_IFACE]['Connected']:
        raise _error('org.bluez.Error.AlreadyConnected', 'Already Connected')
    device.connected = True  # bluez5's own bookkeeping
    device.UpdateProperties(DEVICE_IFACE, {'Connected': dbus.Boolean(True)})
    # The reply goes out first; GATT discovery follows (docs/bluez.md, F3).
    GLib.timeout_add(20, _resolve, device)


def _resolve(device):
    if not device.props[DEVICE_IFACE]['Connected']:
        return False
    manager = mockobject.objects['/']
    for path, interface, properties, methods in _layout(device.path):
        if path not in mockobject.objects:
            manager.AddObject(path, interface, properties, methods)
            manager.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
                dbus.ObjectPath(path), {interface: properties}])
    uuids = [str(u) for u in device.props[DEVICE_IFACE]['UUIDs']]
    changes = {'ServicesResolved': dbus.Boolean(True)}
    if _uuid(0x180D) not in uuids:
        changes['UUIDs'] = dbus.Array(uuids + [_uuid(0x180D)], signature='s', variant_level=1)
    device.UpdateProperties(DEVICE_IFACE, changes)
    return False


def _disconnect(device):
    if not device.props[DEVICE_IFACE]['Connected']:
        raise _error('org.bluez.Error.NotConnected', 'Not Connected')
    device.connected = False
    # The GATT objects stay (a cached layout); Notifying is not reset by a disconnection (docs/bluez.md, F7).
    device.UpdateProperties(DEVICE_IFACE, {'ServicesResolved': dbus.Boolean(False)})
    device.UpdateProperties(DEVICE_IFACE, {'Connected': dbus.Boolean(False)})


@dbus.service.method(MOCK_IFACE, in_signature='o', out_signature='ao')
def AddHeartRateService(_self, device_path):
    '''Makes the device a heart-rate strap whose GATT objects appear when it connects; returns their paths.'''
    if device_path not in mockobject.objects:
        raise _error(MOCK_IFACE + '.NoSuchDevice', f'Device {device_path} does not exist.')
    device = mockobject.objects[device_path]
    device.AddMethods(DEVICE_IFACE, [
        ('Connect', '', '', _connect),
        ('Disconnect', '', '', _disconnect),
    ])
    return dbus.Array([path for path, _, _, _ in _layout(str(device_path))], signature='o')


@dbus.service.method(MOCK_IFACE, in_signature='oasn', out_signature='')
def Advertise(_self, device_path, uuids, rssi):
    '''An advertisement of a known device: PropertiesChanged(UUIDs, RSSI) as bluetoothd sends while discovering.'''
    if device_path not in mockobject.objects:
        raise _error(MOCK_IFACE + '.NoSuchDevice', f'Device {device_path} does not exist.')
    mockobject.objects[device_path].UpdateProperties(DEVICE_IFACE, {
        'UUIDs': dbus.Array([str(u) for u in uuids], signature='s', variant_level=1),
        'RSSI': dbus.Int16(rssi),
    })


@dbus.service.method(MOCK_IFACE, in_signature='oay', out_signature='')
def EmitNotification(_self, characteristic_path, value):
    '''One notification of the characteristic: PropertiesChanged(Value), only while somebody subscribed.'''
    if characteristic_path not in mockobject.objects:
        raise _error(MOCK_IFACE + '.NoSuchCharacteristic', f'{characteristic_path} does not exist.')
    characteristic = mockobject.objects[characteristic_path]
    if not characteristic.props[CHARACTERISTIC_IFACE].get('Notifying', False):
        raise _error(MOCK_IFACE + '.NotNotifying', f'nobody called StartNotify on {characteristic_path}')
    characteristic.UpdateProperties(CHARACTERISTIC_IFACE, {'Value': _bytes(value)})
