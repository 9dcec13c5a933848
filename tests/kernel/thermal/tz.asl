/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A thermal zone for QEMU, for the thermal-qemu-* tests: its temperature
 * (degrees Celsius) is CMOS byte 0x7D, which the guest sets through
 * /dev/port.  Hot trip at 90 C, critical at 105 C (never reached: the
 * kernel powers off there), polled every second.
 */
DefinitionBlock ("tz.aml", "SSDT", 2, "KEVENT", "THERMAL", 1)
{
    Scope (\_TZ)
    {
        OperationRegion (CMS, SystemIO, 0x70, 2)
        Field (CMS, ByteAcc, NoLock, Preserve)
        {
            IDX, 8,
            DAT, 8
        }

        ThermalZone (TZ0)
        {
            Method (_TMP, 0, Serialized)
            {
                IDX = 0x7D
                Local0 = DAT
                Return ((Local0 * 10) + 2732)
            }
            Method (_HOT, 0, NotSerialized)
            {
                Return (3632)
            }
            Method (_CRT, 0, NotSerialized)
            {
                Return (3782)
            }
            Method (_TZP, 0, NotSerialized)
            {
                Return (10)
            }
        }
    }
}
