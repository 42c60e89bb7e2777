"""Areas and perimeters of simple shapes."""


def square_area(lenght):
    return lenght * lenght


def rectangle_perimeter(lenght, width):
    return 2 * (lenght + width)
